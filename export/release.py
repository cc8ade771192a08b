"""Writes every serving artifact of one pre-training checkpoint and checks each one.

    python export/release.py --checkpoint runs/demo --out releases/demo

The same as `electra-tf export --format all --checkpoint ... --out ...`: the TF
Serving SavedModel, the TF-Hub-style encoder + preprocessor pair and the
keras-hub preset, each loaded back the way its consumers load it and compared
with the Keras discriminator (exit status 1 if an id-based export differs by
more than 1e-5). Other flags are `electra-tf export`'s.
"""

import sys

from electra_tf.cli import command

if __name__ == "__main__":
    sys.exit(command(["export", "--format", "all", *sys.argv[1:]]))
