"""Run by test_portable_init.py with KERAS_BACKEND=jax, on a run written on TensorFlow.

`python portable_init_child.py OUT TF_RUN RESUME_ARGS... -- INIT_ARGS... [-- STRAIGHT_OUT
STRAIGHT_ARGS...]` loads TF_RUN's newest checkpoint with `load_pretrainer` (its weights,
read from `ckpt.*`), runs `electra-tf RESUME_ARGS` (a resume of a copy of that run,
optimizer state included) and `electra-tf INIT_ARGS` (a new run with `--init TF_RUN`),
and saves to OUT (npz): every trainable and non-trainable value loaded, the
discriminator's logits on a fixed batch, and each command's status and error output. With
STRAIGHT_OUT, it then does `jax_run_child.py STRAIGHT_OUT -- STRAIGHT_ARGS...`'s work
(test_jax_run.py's straight run, its checks in test_portable_init.py): one JAX import less.
"""

from __future__ import annotations

import contextlib
import gc
import io
import sys

import jax_run_child
import numpy as np
from jax_run_child import fixed_batch

from electra_tf.cli import main as cli


def _run(args: list[str]) -> tuple[int, str]:
    """`electra-tf args` in this process: its status and what it wrote to stderr."""
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        status = cli(args)
    return status, errors.getvalue()


def main(out: str, run: str, resume: list[str], init: list[str]) -> None:
    import keras

    from electra_tf.pretraining.checkpoint import load_pretrainer

    model = load_pretrainer(run)
    values = {
        f"{group}.{index:05d}": keras.ops.convert_to_numpy(variable.value)
        for group, variables in (
            ("trainable", model.trainable_variables),
            ("non_trainable", model.non_trainable_variables),
        )
        for index, variable in enumerate(variables)
    }
    logits = keras.ops.convert_to_numpy(model.discriminator(fixed_batch(), training=False))
    resume_status, resume_error = _run(resume)
    init_status, init_error = _run(init)
    np.savez(
        out,
        logits=logits,
        backend=keras.config.backend(),
        resume_status=resume_status,
        resume_error=resume_error,
        init_status=init_status,
        init_error=init_error,
        **values,
    )


if __name__ == "__main__":
    arguments = sys.argv[3:]
    split = arguments.index("--")
    init, straight = arguments[split + 1 :], []
    if "--" in init:
        init, straight = init[: init.index("--")], init[init.index("--") + 1 :]
    main(sys.argv[1], sys.argv[2], arguments[:split], init)
    if straight:
        jax_run_child.main(straight[0], [straight[1:]])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
