"""The models' random initializers, whose draws a build can skip when every weight it makes
is overwritten straight after (a released encoder's weights, a checkpoint's).

Drawing the initial values of a MiniLM-sized encoder costs about half a second on
TensorFlow (one truncated-normal op per kernel, 23 million values), and `--init` paid it
twice before fine-tuning began: once for the model the weights were read into, once for
the task model's encoder they were copied into. Inside `draws_skipped()` these initializers
give zeros instead. Only the call is skipped: each initializer is still made as before,
taking its seed from Keras' global generator when it is made, so every later draw (a task
head's, dropout's) is the one it was without the scope.

>>> import numpy as np
>>> init = TruncatedNormal(stddev=0.02, seed=3)
>>> with draws_skipped():
...     float(np.abs(np.asarray(init((2, 3)))).max())
0.0
>>> bool(np.array_equal(init((2, 3)), keras.initializers.TruncatedNormal(0.0, 0.02, 3)((2, 3))))
True
"""

from __future__ import annotations

import contextlib
import contextvars

import keras

__all__ = ["GlorotUniform", "TruncatedNormal", "draws_skipped", "skipping_draws"]

_SKIPPED = contextvars.ContextVar("electra_tf_initial_draws_skipped", default=False)


@contextlib.contextmanager
def draws_skipped(skip: bool = True):
    """Within: this module's initializers return zeros (`skip=False`: a no-op, for callers
    that skip only when weights will follow)."""
    token = _SKIPPED.set(bool(skip) or _SKIPPED.get())
    try:
        yield
    finally:
        _SKIPPED.reset(token)


def skipping_draws() -> bool:
    """Whether a build now gets zeros from this module's initializers."""
    return _SKIPPED.get()


class _Skippable:
    def __call__(self, shape, dtype=None):
        if _SKIPPED.get():
            return keras.ops.zeros(shape, dtype=dtype)
        return super().__call__(shape, dtype=dtype)


@keras.saving.register_keras_serializable(package="electra_tf")
class TruncatedNormal(_Skippable, keras.initializers.TruncatedNormal):
    """`keras.initializers.TruncatedNormal`, whose draw `draws_skipped` skips."""


@keras.saving.register_keras_serializable(package="electra_tf")
class GlorotUniform(_Skippable, keras.initializers.GlorotUniform):
    """`keras.initializers.GlorotUniform`, whose draw `draws_skipped` skips."""
