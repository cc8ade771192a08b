"""Graph ops traced by the package's own jobs keep one fixed creation stack.

TensorFlow records, for every op it adds to a graph, the Python stack that created it
(`tf_stack.extract_stack`, 30-100 us an op on 2 AVX2 cores, more the deeper the stack), and
reads it only when that op fails at run time, to print "defined at" lines under the error.
A fine-tuning call traces about ten thousand ops (the train step and its gradients, the dev
pass): the recording is about a tenth of the first `fit` call's CPU time
(docs/results/finetuning.md).

Inside `fixed()` every op gets one stack instead, made once here: a failing op's message
still names the op (its node name and type) and its "defined at" line names this module's
`record_with_ELECTRA_TF_OP_STACKS_1` instead of the op's own Python line. Set the
environment variable `ELECTRA_TF_OP_STACKS=1` to record each op's stack again (to debug a
failing op). Nothing changes on JAX or PyTorch, or where TensorFlow's internals moved.
"""

from __future__ import annotations

import contextlib
import os
import threading

import keras

__all__ = ["fixed", "recorded"]

ENVIRONMENT = "ELECTRA_TF_OP_STACKS"
_LOCK = threading.Lock()
_STATE = {"depth": 0, "saved": None, "stack": None}


def recorded() -> bool:
    """Whether each op's own stack is recorded inside `fixed()` (ELECTRA_TF_OP_STACKS=1)."""
    return os.environ.get(ENVIRONMENT, "").strip() in ("1", "true", "yes")


def record_with_ELECTRA_TF_OP_STACKS_1(tf_stack, into: list) -> None:  # noqa: N802
    """The one stack every op gets: its last line names the variable that restores them."""
    into.append(tf_stack.extract_stack(stacklevel=1))


def _one_stack(tf_stack):
    """Made on a thread of its own, so that no caller's frame is in it."""
    into = []
    worker = threading.Thread(target=record_with_ELECTRA_TF_OP_STACKS_1, args=(tf_stack, into))
    worker.start()
    worker.join()
    return into[0]


class _OneStack:
    """Stands in for TensorFlow's `tf_stack` module inside its `ops` module."""

    def __init__(self, module, stack):
        self._module, self._stack = module, stack

    def __getattr__(self, name):
        return getattr(self._module, name)

    def extract_stack(self, stacklevel=1):
        return self._stack


def _graph_ops():
    """TensorFlow's `ops` module if it creates ops through `ops.tf_stack`, else None."""
    if keras.config.backend() != "tensorflow" or recorded():
        return None
    try:
        from tensorflow.python.framework import ops
        from tensorflow.python.util import tf_stack
    except ImportError:
        return None
    module = getattr(ops, "tf_stack", None)
    if not callable(getattr(module, "extract_stack", None)):
        return None
    if _STATE["stack"] is None:
        _STATE["stack"] = _one_stack(tf_stack)
    return ops


@contextlib.contextmanager
def fixed():
    """Within this block (nestable, process-wide), graph ops keep one fixed creation stack."""
    ops = _graph_ops()
    if ops is None:
        yield
        return
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["saved"] = ops.tf_stack
            ops.tf_stack = _OneStack(ops.tf_stack, _STATE["stack"])
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                ops.tf_stack, _STATE["saved"] = _STATE["saved"], None
