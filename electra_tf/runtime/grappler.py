"""A fine-tuning call's functions run without Grappler's graph rewrites.

TensorFlow rewrites each traced function with Grappler (its graph optimizer: constant
folding, arithmetic simplification, fusing a product with its bias and activation, ...)
when the function is first called. For a fine-tuning call's train step that is about 2 s
of a 5-6 s first step on 2 AVX2 cores, paid once per call, and the rewritten steps ran no
faster than the plain ones there: with Grappler off, reviews (700 x 3 epochs) ran 1.037x
and question answering (500 x 2 epochs) 1.037x their speed with it on, each step no
slower (0.984x and 0.998x), the same dev scores (docs/results/finetuning.md).

Inside `off()` the functions first called there are not rewritten (TensorFlow's own switch,
`tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})`, which the
process's later functions see again as it was). Set `ELECTRA_TF_GRAPPLER=1` to keep
Grappler on. Nothing changes on JAX or PyTorch, or where Grappler is off already.
"""

from __future__ import annotations

import contextlib
import os
import threading

import keras

__all__ = ["ENVIRONMENT", "off"]

ENVIRONMENT = "ELECTRA_TF_GRAPPLER"
_SWITCH = "disable_meta_optimizer"
_LOCK = threading.Lock()
_DEPTH = [0]


def _optimizer_config():
    """`tf.config.optimizer` where this process may turn Grappler off, else None."""
    if keras.config.backend() != "tensorflow":
        return None
    if os.environ.get(ENVIRONMENT, "").strip() in ("1", "true", "yes"):
        return None
    import tensorflow as tf

    return tf.config.optimizer


@contextlib.contextmanager
def off():
    """Within this block (nestable, process-wide), functions first called are not rewritten."""
    config = _optimizer_config()
    with _LOCK:
        owner = config is not None and _DEPTH[0] == 0
        if owner and config.get_experimental_options().get(_SWITCH):
            owner = False  # already off (the user's setting): left as it is
        if owner:
            config.set_experimental_options({_SWITCH: True})
        if config is not None:
            _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            if config is not None:
                _DEPTH[0] -= 1
            if owner:
                config.set_experimental_options({_SWITCH: None})
