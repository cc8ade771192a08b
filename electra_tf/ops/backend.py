"""Which Keras backend runs the models, and the one switch for TensorFlow's fast paths.

The models, the objectives' math and the pre-training step are written once in
`keras.ops` and run on TensorFlow, JAX and PyTorch alike. On TensorFlow, a few
pieces run faster forms measured on the step (custom gradients, batched gathers,
fused kernels: `electra_tf.layers.kernels`, `electra_tf.ops.losses`,
`electra_tf.ops.sampling`, `electra_tf.ops.random`); each has its portable twin in
`electra_tf.ops.portable`, tested equal to it. `tensorflow_fast_paths()` says which
runs; `portable()` forces the portable forms on TensorFlow too (the tests use it
to compare the two in one process).

Nothing here imports TensorFlow, so the JAX and PyTorch backends run on a machine
without it.
"""

from __future__ import annotations

import contextlib
import importlib

import keras

__all__ = ["name", "tensorflow_fast_paths", "portable", "tensorflow"]

_PORTABLE = [False]


def name() -> str:
    """The Keras backend: "tensorflow", "jax" or "torch"."""
    return keras.config.backend()


def tensorflow_fast_paths() -> bool:
    """Whether TensorFlow's faster forms run: the TensorFlow backend, outside `portable()`."""
    return name() == "tensorflow" and not _PORTABLE[-1]


@contextlib.contextmanager
def portable():
    """Within this block, graphs traced use the portable `keras.ops` forms on every backend."""
    _PORTABLE.append(True)
    try:
        yield
    finally:
        _PORTABLE.pop()


def tensorflow():
    """The `tensorflow` module, or None where it is not installed (a JAX or PyTorch machine)."""
    try:
        return importlib.import_module("tensorflow")
    except ImportError:
        return None
