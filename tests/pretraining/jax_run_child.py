"""Run by test_jax_run.py with KERAS_BACKEND=jax: a CLI pre-training run, then its outputs.

`python jax_run_child.py OUT -- ARGS... [-- ARGS...]` runs `electra-tf ARGS...` in this
process for each group of arguments in turn (pre-training runs), then loads the first
run's newest checkpoint with `load_pretrainer` and saves to OUT (npz) the discriminator's
logits on a fixed batch and the backend's name.
"""

from __future__ import annotations

import sys

import numpy as np
from helpers import structured_ids

from electra_tf.cli import main as cli


def fixed_batch(seq=16):
    """Eight structured rows (the run's kind of data), as the discriminator's inputs."""
    ids, mask, segments = structured_ids(8, seq, seed=5)
    return {"token_ids": ids, "padding_mask": mask, "segment_ids": segments}


def main(out: str, commands: list[list[str]]) -> None:
    for args in commands:
        status = cli(args)
        if status:
            sys.exit(status)
    import keras

    from electra_tf.pretraining.checkpoint import load_pretrainer

    run = commands[0][commands[0].index("--output-dir") + 1]
    model = load_pretrainer(run)
    logits = model.discriminator(fixed_batch(), training=False)
    np.savez(out, logits=keras.ops.convert_to_numpy(logits), backend=keras.config.backend())


if __name__ == "__main__":
    groups = []
    for item in sys.argv[2:]:
        if item == "--":
            groups.append([])
        else:
            groups[-1].append(item)
    main(sys.argv[1], groups)
