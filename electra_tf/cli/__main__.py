"""`python -m electra_tf.cli ...`: the same as `electra-tf ...`."""

import sys

from electra_tf.cli import command

if __name__ == "__main__":
    sys.exit(command())
