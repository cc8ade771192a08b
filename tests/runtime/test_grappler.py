"""Functions first called inside `grappler.off()` run as traced; outside, Grappler rewrites them."""

import tensorflow as tf
from tensorflow.python.eager import context

from electra_tf.runtime import grappler


def _ops_run() -> set[str]:
    """The op types a new function (a product, its bias, a ReLU) ran, after any rewriting."""
    w, b = tf.ones([8, 4]), tf.ones([4])
    function = tf.function(lambda x: tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b)))
    state = context.context()
    state.enable_run_metadata()
    try:
        function(tf.ones([2, 8]))
        metadata = state.export_run_metadata()
    finally:
        state.disable_run_metadata()
    return {n.op for g in metadata.function_graphs for n in g.post_optimization_graph.node}


def _switch():
    return tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]


def test_inside_the_ops_run_as_traced_and_outside_grappler_fuses_them(monkeypatch):
    monkeypatch.delenv(grappler.ENVIRONMENT, raising=False)
    assert "_FusedMatMul" in _ops_run() and not _switch()  # Grappler's remapper, by default
    with grappler.off():
        with grappler.off():  # nested: still off, and the outer exit restores
            assert _switch()
        ran = _ops_run()
        assert {"MatMul", "BiasAdd", "Relu"} <= ran and "_FusedMatMul" not in ran
    assert not _switch() and "_FusedMatMul" in _ops_run()


def test_the_environment_variable_keeps_grappler_on(monkeypatch):
    monkeypatch.setenv(grappler.ENVIRONMENT, "1")
    with grappler.off():
        assert not _switch() and "_FusedMatMul" in _ops_run()


def test_grappler_turned_off_by_the_user_stays_off(monkeypatch):
    monkeypatch.delenv(grappler.ENVIRONMENT, raising=False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        with grappler.off():
            assert _switch()
        assert _switch()
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": None})
    assert not _switch()
