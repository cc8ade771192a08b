import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import load_recipe
from electra_tf.pretraining.optimizer import ElectraAdamW, WarmupLinearDecay, build_optimizer


def test_schedule_is_warmup_times_linear_decay():
    schedule = WarmupLinearDecay(1e-3, total_steps=100, warmup_steps=10)
    # rate = 1e-3 * (1 - s/100) * min(1, s/10)
    expected = {
        0: 0.0,
        1: 1e-3 * 0.99 * 0.1,
        5: 1e-3 * 0.95 * 0.5,
        10: 1e-3 * 0.9,
        50: 5e-4,
        100: 0.0,
        150: 0.0,
    }
    for step, rate in expected.items():
        assert float(schedule(step)) == pytest.approx(rate, rel=1e-6, abs=1e-12), step
    no_warmup = WarmupLinearDecay(2.0, total_steps=4, warmup_steps=0, power=2.0)
    assert [float(no_warmup(s)) for s in range(5)] == pytest.approx([2.0, 1.125, 0.5, 0.125, 0.0])
    assert WarmupLinearDecay(**schedule.get_config()).get_config() == schedule.get_config()


def _adam_by_hand(w, g, lr, wd, b1=0.9, b2=0.999, eps=1e-6, bias_correction=True, decay=True):
    # The betas as float32 holds them (1 - float32(0.999) is 1.3e-5 below 0.001), as every
    # float32 Adam, the reference's included, uses them.
    b1, b2 = float(np.float32(b1)), float(np.float32(b2))
    w = w - lr * wd * w if decay else w
    m, v = (1 - b1) * g, (1 - b2) * g * g
    alpha = lr * np.sqrt(1 - b2) / (1 - b1) if bias_correction else lr
    return w - alpha * m / (np.sqrt(v) + eps)


@pytest.mark.parametrize("bias_correction", [True, False])
def test_one_step_matches_the_formula_with_decay_exclusions(bias_correction):
    kernel = keras.Variable(np.array([1.0, -2.0], "float32"), name="kernel")
    gamma = keras.Variable(np.array([0.5, 0.5], "float32"), name="gamma")
    bias = keras.Variable(np.array([0.3], "float32"), name="bias")
    grads = [
        np.array([0.01, -0.02], "float32"),
        np.array([0.03, 0.0], "float32"),
        np.array([-0.01], "float32"),
    ]
    opt = ElectraAdamW(
        learning_rate=0.1, weight_decay=0.01, clip_norm=0.0, bias_correction=bias_correction
    )
    opt.apply([tf.constant(g) for g in grads], [kernel, gamma, bias])
    np.testing.assert_allclose(
        kernel.numpy(),
        _adam_by_hand(np.array([1.0, -2.0]), grads[0], 0.1, 0.01, bias_correction=bias_correction),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        gamma.numpy(),
        _adam_by_hand(
            np.array([0.5, 0.5]), grads[1], 0.1, 0.01, bias_correction=bias_correction, decay=False
        ),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        bias.numpy(),
        _adam_by_hand(
            np.array([0.3]), grads[2], 0.1, 0.01, bias_correction=bias_correction, decay=False
        ),
        rtol=1e-5,
    )


def _applier(opt, variables, graph: bool):
    """`opt.apply` of one gradient per variable, as a `tf.function` if `graph`."""

    def apply(*grads):
        return opt.apply(list(grads), variables)

    return tf.function(apply) if graph else apply


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("bias_correction", [True, False])
def test_the_fused_kernel_equals_the_same_formula_in_ops(monkeypatch, bias_correction, graph):
    """`ResourceApplyAdam` (plain variables) against the ops a distributed variable takes,
    over steps with decay, clipping and a skipped non-finite step in between, eagerly and
    in a `tf.function` (where the fused loop skips that step with a `tf.cond`)."""
    from electra_tf.pretraining import optimizer as module

    rng = np.random.default_rng(0)
    start = rng.normal(size=(2, 3, 4)).astype("float32")
    steps = [rng.normal(size=(3, 4)).astype("float32") for _ in range(4)]
    steps[2] = np.full((3, 4), np.nan, "float32")  # skipped: nothing may move
    results = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(module, "_resource", lambda variable: None)
        kernel = keras.Variable(start[0], name="kernel")
        bias = keras.Variable(start[1][0], name="bias")
        opt = ElectraAdamW(
            learning_rate=0.05, weight_decay=0.01, clip_norm=1.0, bias_correction=bias_correction
        )
        opt.build([kernel, bias])

        apply = _applier(opt, [kernel, bias], graph)
        trace = []
        for g in steps:
            applied = apply(tf.constant(g), tf.constant(g[0]))
            trace.append(
                (bool(applied), kernel.numpy().copy(), bias.numpy().copy(),
                 opt._momentums[0].numpy().copy(), opt._velocities[0].numpy().copy())
            )  # fmt: skip
        results.append(trace)
    for fused, ops_ in zip(*results):
        assert fused[0] == ops_[0]
        for a, b in zip(fused[1:], ops_[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    assert [step[0] for step in results[0]] == [True, True, False, True]
    for before, after in ((1, 2),):  # the skipped step changed no weight and no moment
        for a, b in zip(results[0][before][1:], results[0][after][1:]):
            np.testing.assert_array_equal(a, b)


def _graph_ops(function) -> list[str]:
    """The op types of a concrete function's graph and of every function it calls."""
    graph = function.graph
    types = [op.type for op in graph.get_operations()]
    for inner in graph._functions.values():
        types += [node.op for node in inner.cached_definition.node_def]
    return types


def test_the_traced_update_makes_the_step_scalars_once_and_selects_no_gradient(monkeypatch):
    """Outside a distribution strategy the traced update is one fused kernel per variable,
    with the rate's bias corrections made once (2 `Pow`, not 2 per variable) and no
    `SelectV2` zeroing each gradient (a non-finite step is skipped by a `tf.cond`); the
    ops path a strategy's variables take makes both per variable."""
    from electra_tf.pretraining import optimizer as module

    counts = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(module, "_resource", lambda variable: None)
        variables = [keras.Variable(np.ones(3, "float32"), name=f"kernel_{i}") for i in range(6)]
        opt = ElectraAdamW(learning_rate=0.1, weight_decay=0.01, clip_norm=1.0)
        opt.build(variables)
        spec = [tf.TensorSpec([3], tf.float32)] * 6
        traced = _applier(opt, variables, graph=True)
        types = _graph_ops(traced.get_concrete_function(*spec))
        counts.append({k: types.count(k) for k in ("ResourceApplyAdam", "Pow", "SelectV2")})
    assert counts[0] == {"ResourceApplyAdam": 6, "Pow": 2, "SelectV2": 0}
    assert counts[1] == {"ResourceApplyAdam": 0, "Pow": 12, "SelectV2": 6}


def test_equals_keras_adamw_when_clipping_is_off():
    values = np.array([[0.2, -0.4], [0.1, 0.3]], "float32")
    ours, theirs = keras.Variable(values, name="kernel"), keras.Variable(values, name="kernel")
    a = ElectraAdamW(learning_rate=0.01, weight_decay=0.01, clip_norm=0.0)
    b = keras.optimizers.AdamW(learning_rate=0.01, weight_decay=0.01, epsilon=1e-6)
    for step in range(3):
        g = tf.constant(values * (step + 1) - 0.1)
        a.apply([g], [ours])
        b.apply([g], [theirs])
    # Keras takes 1 - beta_2 in float64 (0.001), the fused kernel from float32 beta_2
    # (1.3e-5 less): 1e-6 apart after 3 steps.
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=3e-6)


def test_global_norm_clipping_scales_all_gradients_together():
    x, y = keras.Variable([0.0], name="x_kernel"), keras.Variable([0.0, 0.0], name="y_kernel")
    sgd_like = ElectraAdamW(
        learning_rate=1.0,
        weight_decay=0.0,
        clip_norm=1.0,
        bias_correction=False,
        beta_1=0.0,
        beta_2=0.0,
        epsilon=1.0,
    )
    # Global norm 13 -> gradients scaled by 1/13; with beta 0 and v = g^2: step = g / (|g| + 1).
    sgd_like.apply([tf.constant([3.0]), tf.constant([4.0, 12.0])], [x, y])
    clipped = np.array([3.0, 4.0, 12.0]) / 13.0
    step = clipped / (np.abs(clipped) + 1.0)
    np.testing.assert_allclose(np.concatenate([x.numpy(), y.numpy()]), -step, rtol=1e-6)


def test_build_optimizer_from_config_starts_at_zero_rate():
    config = load_recipe("small")
    opt = build_optimizer(config.train)
    assert isinstance(opt, ElectraAdamW) and opt.epsilon == 1e-6 and opt.clip_norm == 1.0
    assert float(opt.learning_rate) == 0.0  # step 0 of the warmup
    fp16 = build_optimizer(config.train, "mixed_float16")
    assert isinstance(fp16, keras.optimizers.LossScaleOptimizer)
    with pytest.raises(ValueError, match="clip_norm"):
        ElectraAdamW(global_clipnorm=1.0)
