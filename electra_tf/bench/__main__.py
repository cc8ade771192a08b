"""`python -m electra_tf.bench ...`: an alias of `electra-tf bench ...`."""

import sys

from electra_tf.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
