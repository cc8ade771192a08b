"""`python -m electra_tf.cli ...`: the same as `electra-tf ...`."""

import sys

from electra_tf.cli import main

if __name__ == "__main__":
    sys.exit(main())
