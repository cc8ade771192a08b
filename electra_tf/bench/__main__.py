"""`python -m electra_tf.bench ...`: an alias of `electra-tf bench ...`."""

import sys

from electra_tf.cli import command

if __name__ == "__main__":
    sys.exit(command(["bench", *sys.argv[1:]]))
