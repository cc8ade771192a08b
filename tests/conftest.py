"""Test session setup: quiet TensorFlow, two logical CPU devices for the strategy tests."""

import atexit
import gc
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
# `pretrain` on JAX keeps compiled programs under ~/.cache unless JAX is given a folder: the
# tests' runs and their child processes keep theirs in one of this process instead.
_jax_cache = tempfile.mkdtemp(prefix="electra-tf-jax-cache-")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", _jax_cache)
atexit.register(shutil.rmtree, _jax_cache, ignore_errors=True)
sys.path.insert(0, os.path.dirname(__file__))

import tensorflow as tf  # noqa: E402

# MirroredStrategy tests need two replicas on this CPU; logical devices must be
# configured before TensorFlow initializes its devices, i.e. before any test runs.
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
)


def _skip_op_stack_traces():
    """Test-only: graph ops keep one fixed creation stack instead of each op's own Python
    stack (TensorFlow records it for the runtime's error messages only; about 30 us an op,
    5% of the pytest workers' CPU in a py-spy profile of the suite). Ops, graphs and numbers
    are unchanged; a failing graph op's message names no Python line."""
    from tensorflow.python.framework import ops
    from tensorflow.python.util import tf_stack

    fixed = tf_stack.extract_stack(stacklevel=1)

    class _Fixed:
        def __getattr__(self, name):
            return getattr(tf_stack, name)

        @staticmethod
        def extract_stack(stacklevel=1):
            return fixed

    ops.tf_stack = _Fixed()


_skip_op_stack_traces()


def pytest_unconfigure(config):
    """Each pytest process's exit skips the collector's walk over every object left, as
    `electra_tf.cli.command` does for a command (atexit handlers still run)."""
    gc.freeze()


def pytest_collection_modifyitems(config, items):
    """Hand the longest files out first (`tests/file_seconds.py`): the same order on every
    xdist worker, as their collections must match."""
    import file_seconds

    seconds = file_seconds.load()
    if seconds:
        paths = [item.nodeid.split("::")[0] for item in items]
        items[:] = [items[i] for i in file_seconds.longest_first(paths, seconds)]


import pytest  # noqa: E402  (added at the end: the setup above stays as it is)


@pytest.fixture(params=[pytest.param("traced", marks=pytest.mark.slow), "eager"])
def steps_run(request):
    """How a test's Keras steps and other `tf.function`s run: its `[eager]` case, the default
    twin, runs them eagerly (a few steps cost less run than traced, and each new input form
    or model is a new trace); its `[traced]` case, the full form, behind `-m slow`, traces
    them as a user's run does. Yields "eager" or "traced"."""
    if request.param == "traced":
        yield request.param
        return
    from helpers import functions_run_eagerly

    with functions_run_eagerly():
        yield request.param
