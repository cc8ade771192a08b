"""Run by test_jax_run.py with KERAS_BACKEND=jax: a CLI pre-training run, then its outputs.

`python jax_run_child.py OUT -- ARGS... [-- ARGS...]` runs `electra-tf ARGS...` in this
process for each group of arguments in turn (pre-training runs). After the first, it
loads that run's newest checkpoint with `load_pretrainer`; it saves to OUT (npz) the
discriminator's logits on a fixed batch, the backend's name, and how many devices the
last run's Keras distribution split the batch over (1: none).
"""

from __future__ import annotations

import gc
import sys

import numpy as np
from helpers import structured_ids

from electra_tf.cli import main as cli


def fixed_batch(seq=16):
    """Eight structured rows (the run's kind of data), as the discriminator's inputs."""
    ids, mask, segments = structured_ids(8, seq, seed=5)
    return {"token_ids": ids, "padding_mask": mask, "segment_ids": segments}


def _run(args: list[str]) -> None:
    status = cli(args)
    if status:
        sys.exit(status)


def main(out: str, commands: list[list[str]]) -> None:
    _run(commands[0])
    import keras

    from electra_tf.pretraining.checkpoint import load_pretrainer

    model = load_pretrainer(commands[0][commands[0].index("--output-dir") + 1])
    logits = keras.ops.convert_to_numpy(model.discriminator(fixed_batch(), training=False))
    for args in commands[1:]:
        _run(args)
    distribution = keras.distribution.distribution()
    devices = distribution.device_mesh.devices.size if distribution is not None else 1
    np.savez(out, logits=logits, backend=keras.config.backend(), devices=devices)


if __name__ == "__main__":
    groups = []
    for item in sys.argv[2:]:
        if item == "--":
            groups.append([])
        else:
            groups[-1].append(item)
    main(sys.argv[1], groups)
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
