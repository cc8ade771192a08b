"""Graph ops traced inside `op_stacks.fixed()` keep one creation stack that names the fix."""

import types

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import ops

from electra_tf.runtime import op_stacks

HINT = "record_with_ELECTRA_TF_OP_STACKS_1"


def _op_frames() -> list[str]:
    graph = tf.Graph()
    with graph.as_default():
        value = tf.constant(1.0) + 2.0
    return [frame.name for frame in value.op.traceback]


def test_ops_made_inside_keep_the_one_stack_and_the_module_is_restored_after(monkeypatch):
    monkeypatch.delenv(op_stacks.ENVIRONMENT, raising=False)
    before = ops.tf_stack
    with op_stacks.fixed():
        inside = _op_frames()
        with op_stacks.fixed():  # nested: still fixed, and the outer exit restores
            assert _op_frames() == inside
        assert ops.tf_stack is not before and _op_frames() == inside
    assert ops.tf_stack is before
    assert inside[-1] == HINT and "_op_frames" not in inside
    # No caller's frame: the stack was made on a thread of its own.
    assert not any(name.startswith("test_") for name in inside)


def test_the_environment_variable_keeps_each_ops_own_stack(monkeypatch):
    monkeypatch.setenv(op_stacks.ENVIRONMENT, "1")
    before = ops.tf_stack
    with op_stacks.fixed():
        assert ops.tf_stack is before
        assert HINT not in _op_frames()


def test_a_failing_op_in_fit_is_still_named_and_its_message_says_how_to_see_its_line(
    monkeypatch,
):
    monkeypatch.delenv(op_stacks.ENVIRONMENT, raising=False)
    layers = keras.layers
    model = keras.Sequential(
        [layers.Embedding(10, 4), layers.GlobalAveragePooling1D(), layers.Dense(2)]
    )
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    with op_stacks.fixed(), pytest.raises(tf.errors.InvalidArgumentError) as raised:
        model.fit(np.array([[1, 2, 30]]), np.array([1]), verbose=0)  # id 30 of 10
    message = str(raised.value)
    assert "GatherV2" in message and "30 is not in [0, 10)" in message
    assert HINT in message


def test_pretraining_fits_inside_the_scope(monkeypatch):
    from electra_tf.pretraining import run

    monkeypatch.delenv(op_stacks.ENVIRONMENT, raising=False)
    seen = []
    model = types.SimpleNamespace(
        config=types.SimpleNamespace(train=types.SimpleNamespace(strategy="default")),
        fit=lambda *args, **kwargs: (
            seen.append(type(ops.tf_stack).__name__)
            or types.SimpleNamespace(history={"loss": [2.0, 1.5]})
        ),
    )
    assert run._fit(model, None, 1, [], 0, None) == {"loss": 1.5}
    assert seen == ["_OneStack"] and type(ops.tf_stack).__name__ != "_OneStack"
