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
import os

import keras

__all__ = ["jax_compile_cache", "name", "tensorflow_fast_paths", "portable", "tensorflow"]

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


def jax_compile_cache() -> str | None:
    """On JAX, keeps compiled steps on disk so that a resumed or repeated run, or the next
    seed of a fine-tune, skips the compile (ELECTRA-Small's step: 1-2 minutes on an H200,
    about 20 s on 2 CPU cores; a MiniLM fine-tune's training step, about 5 s there).

    JAX's own setting (JAX_COMPILATION_CACHE_DIR, or `jax.config`) wins; else
    `$XDG_CACHE_HOME/electra-tf/jax` (`~/.cache/...`), which grows by one file per new
    program (a few MB for ELECTRA-Small's step) and may be deleted at any time. JAX keys
    each entry on the program, its options, its version and the device, so a changed model
    or machine compiles anew. Returns the folder, or None when this process does not run
    on JAX."""
    if name() != "jax":
        return None
    import jax

    folder = jax.config.jax_compilation_cache_dir
    if not folder:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(home, "electra-tf", "jax")
        jax.config.update("jax_compilation_cache_dir", folder)
    return folder
