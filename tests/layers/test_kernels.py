"""The faster dropout, GELU and projections against Keras's own and against worked numbers."""

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.layers import kernels


def test_gelu_and_its_gradient_match_worked_values_and_tensorflow():
    x = tf.constant([-3.0, -1.0, 0.0, 1.0, 2.5])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ours = kernels.gelu(x)
        reference = tf.nn.gelu(x, approximate=False)
    # Phi(1) = 0.8413447, phi(1) = 0.2419707: gelu(1) = Phi(1), gelu'(1) = Phi(1) + phi(1).
    np.testing.assert_allclose(ours.numpy()[2:4], [0.0, 0.8413447], atol=1e-6)
    np.testing.assert_allclose(tape.gradient(ours, x).numpy()[2:4], [0.5, 1.0833155], atol=1e-6)
    np.testing.assert_allclose(ours.numpy(), reference.numpy(), atol=1e-6)
    np.testing.assert_allclose(
        tape.gradient(ours, x).numpy(), tape.gradient(reference, x).numpy(), atol=1e-6
    )


def test_dropout_mask_is_the_16_bit_halves_of_the_random_words():
    seed = tf.constant([7, 11])
    inputs = tf.reshape(tf.range(1, 16, dtype=tf.float32), [3, 5])  # odd size: the last half unused
    out = kernels.dropout(inputs, 0.25, seed).numpy()
    words = tf.random.stateless_uniform(
        [8], seed=seed, minval=None, maxval=None, dtype=tf.uint32
    ).numpy()
    halves = np.frombuffer(words.astype("<u4").tobytes(), "<u2")[:15].reshape(3, 5)
    expected = np.where(halves >= 16384, inputs.numpy() / 0.75, 0.0)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_array_equal(kernels.dropout(inputs, 0.25, seed).numpy(), out)  # pure in seed
    assert not np.array_equal(kernels.dropout(inputs, 0.25, tf.constant([7, 12])).numpy(), out)


def test_dropout_drops_at_the_rate_and_rejects_bad_rates():
    out = kernels.dropout(tf.ones([1000, 1000]), 0.1, tf.constant([1, 2])).numpy()
    dropped = np.mean(out == 0.0)
    p = 6554 / 65536
    assert abs(dropped - p) < 4 * np.sqrt(p * (1 - p) / out.size)
    np.testing.assert_allclose(np.unique(out[out != 0]), [1 / 0.9], rtol=1e-6)
    x = tf.ones([4])
    np.testing.assert_array_equal(kernels.dropout(x, 0.0, tf.constant([1, 2])).numpy(), x.numpy())
    with pytest.raises(ValueError, match="dropout rate must be in"):
        kernels.dropout(x, 1.0, tf.constant([1, 2]))


@pytest.mark.parametrize(
    "equation, input_shape, output_shape, bias_axes",
    [
        ("abc,cde->abde", (2, 3, 6), (None, 2, 4), "de"),
        ("abcd,cde->abe", (2, 3, 2, 4), (None, 6), "e"),
    ],
)
def test_projection_dense_equals_einsum_dense_in_outputs_and_gradients(
    equation, input_shape, output_shape, bias_axes
):
    layer = keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)
    inputs = tf.random.stateless_normal(input_shape, seed=[1, 2])
    layer.build(input_shape)

    def outputs_and_gradients():
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            y = layer(inputs)
            loss = tf.reduce_sum(y * tf.cos(y))
        return [y, *tape.gradient(loss, [inputs, *layer.trainable_variables])]

    before = outputs_and_gradients()
    assert kernels.speed_up(layer) == 1 and isinstance(layer, kernels.ProjectionDense)
    after = outputs_and_gradients()
    for a, b in zip(before, after):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


def test_speed_up_keeps_a_blocks_weights_and_inference_and_reclasses_ten_layers():
    block = keras_hub.layers.TransformerEncoder(intermediate_dim=16, num_heads=2, dropout=0.1)
    block.build((None, None, 8))
    x = tf.random.stateless_normal([2, 5, 8], seed=[3, 4])
    paths, plain = [w.path for w in block.weights], block(x, training=False).numpy()
    # the attention itself, its query, key, value and output projections and its dropout;
    # two block dropouts; the two feed-forward Dense layers
    assert kernels.speed_up(block) == 10
    assert kernels.speed_up(block) == 0  # idempotent
    assert [w.path for w in block.weights] == paths
    np.testing.assert_allclose(block(x, training=False).numpy(), plain, atol=1e-5)
    trained = block(x, training=True).numpy()
    assert not np.allclose(trained, plain)  # dropout is active in training


def test_fast_dropout_layer_draws_from_its_seed_generator():
    layer = keras.layers.Dropout(0.5, seed=5)
    kernels.speed_up(layer)
    x = tf.ones([64])
    state = layer.seed_generator.state.numpy().copy()
    out = layer(x, training=True).numpy()
    seed = tf.cast(tf.math.floormod(state, tf.int32.max - 1), tf.int32)
    np.testing.assert_array_equal(out, kernels.dropout(x, 0.5, seed).numpy())
    assert not np.array_equal(layer(x, training=True).numpy(), out)  # the state moved on
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x.numpy())


def test_encoder_with_keras_kernels_equals_the_fast_encoder_in_outputs_and_gradients():
    from electra_tf.models.encoder import ElectraEncoder

    sizes = dict(
        vocabulary_size=30, num_layers=2, hidden_dim=8, embedding_dim=4, num_heads=2,
        intermediate_dim=16, max_sequence_length=8,
    )  # fmt: skip
    ids = np.array([[1, 5, 6, 2, 0], [1, 7, 3, 9, 2]], "int32")
    inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids > 0}
    fast = ElectraEncoder(**sizes)
    fast(inputs)
    with kernels.keras_kernels():
        plain = ElectraEncoder(**sizes)
        plain(inputs)
    names = {type(layer).__name__ for layer in plain._flatten_layers()}
    assert not names & {"FastDropout", "ProjectionDense", "FastDense"}
    fast_names = {type(x).__name__ for x in fast._flatten_layers()}
    assert {"FastDropout", "ProjectionDense", "FastDense"} <= fast_names
    plain.set_weights(fast.get_weights())
    results = []
    for encoder in (fast, plain):
        with tf.GradientTape() as tape:
            out = encoder(inputs, training=False)
            loss = tf.reduce_sum(out * tf.sin(out))
        grads = tape.gradient(loss, encoder.trainable_variables)
        results.append([out, *(tf.convert_to_tensor(g) for g in grads)])  # embeddings: sparse
    for a, b in zip(*results):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=2e-5)


@pytest.mark.parametrize("layout", ["plain", "wide"])
@pytest.mark.parametrize("k, n", [(16, 1024), (1024, 16), (8, 8)])
def test_weight_gradient_is_x_transposed_times_upstream_in_either_layout(layout, k, n):
    x = np.random.default_rng(0).normal(size=(6, k)).astype("float32")
    up = np.random.default_rng(1).normal(size=(6, n)).astype("float32")
    with kernels.gradient_layout(layout):
        graph = tf.function(kernels.weight_gradient).get_concrete_function(
            tf.TensorSpec([None, k]), tf.TensorSpec([None, n])
        )
    got = graph(tf.constant(x), tf.constant(up)).numpy()
    np.testing.assert_allclose(got, x.astype("float64").T @ up, rtol=1e-5, atol=1e-5)
    transposes = [op for op in graph.graph.get_operations() if op.type == "Transpose"]
    # the wide form writes out the wider operand transposed; square-ish shapes never do
    assert len(transposes) == (1 if layout == "wide" and k != n else 0)


def test_gradient_layout_auto_follows_the_cpu_flags_and_the_onednn_cap(tmp_path, monkeypatch):
    with_512 = tmp_path / "avx512"
    with_512.write_text("processor: 0\nflags\t: fpu avx2 avx512f avx512dq avx512bw avx512vl\n")
    avx2_only = tmp_path / "avx2"
    avx2_only.write_text("processor: 0\nflags\t: fpu avx avx2 fma\n")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    assert not kernels.onednn_runs_avx2(str(with_512))
    assert kernels.onednn_runs_avx2(str(avx2_only))
    assert not kernels.onednn_runs_avx2(str(tmp_path / "missing"))
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE")
    assert not kernels.onednn_runs_avx2(str(with_512))
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "avx2")
    assert kernels.onednn_runs_avx2(str(with_512))
    with kernels.gradient_layout("plain"):
        assert not kernels.wide_gradient_layout()
        with kernels.gradient_layout("auto"):
            assert kernels.wide_gradient_layout()  # the cap says AVX2
    with pytest.raises(ValueError, match="gradient layout must be one of"):
        with kernels.gradient_layout("fast"):
            pass


@pytest.mark.parametrize("layout", ["plain", "wide"])
@pytest.mark.parametrize("input_shape", [(3, 5, 16), (7, 16)])
def test_fast_dense_equals_dense_in_outputs_and_gradients(layout, input_shape):
    plain = keras.layers.Dense(1024, activation="tanh")
    plain.build(input_shape)
    fast = keras.layers.Dense(1024, activation="tanh")
    fast.build(input_shape)
    fast.set_weights([w + 0.1 for w in plain.get_weights()])  # a non-zero bias
    plain.set_weights(fast.get_weights())
    assert kernels.speed_up(fast) == 1 and isinstance(fast, kernels.FastDense)
    inputs = tf.random.stateless_normal(input_shape, seed=[5, 6])

    @tf.function
    def outputs_and_gradients(layer, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * tf.cos(3.0 * y))
        return [y, *tape.gradient(loss, [x, *layer.trainable_variables])]

    with kernels.gradient_layout(layout):
        got = outputs_and_gradients(fast, inputs)
    want = outputs_and_gradients(plain, inputs)
    assert got[0].shape == want[0].shape == (*input_shape[:-1], 1024)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def test_additive_mask_attention_equals_keras_where_a_query_sees_a_key():
    def make():
        layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
        layer.build((None, None, 6), (None, None, 6))
        return layer

    keras_layer = make()
    fast = make()
    fast.set_weights(keras_layer.get_weights())
    # itself, its four projections and its dropout
    assert kernels.speed_up(fast) == 6 and isinstance(fast, kernels.AdditiveMaskAttention)
    x = tf.random.stateless_normal([2, 5, 6], seed=[7, 8])
    # example 0 sees all keys, example 1 its first three; a [B, 1, S] padding mask
    mask = tf.constant([[[1, 1, 1, 1, 1]], [[1, 1, 1, 0, 0]]], tf.int32)

    def run(layer):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out, probs = layer(x, x, attention_mask=mask, return_attention_scores=True)
            loss = tf.reduce_sum(out * tf.range(6, dtype=tf.float32))
        return out, probs, *tape.gradient(loss, [x, *layer.trainable_weights])

    for a, b in zip(run(keras_layer), run(fast)):  # the projections' rounding differs
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    _, probs = fast(x, x, attention_mask=mask, return_attention_scores=True)
    assert float(tf.reduce_max(probs[1, :, :, 3:])) == 0.0  # masked keys get exactly 0
    # a query that sees no key attends evenly (Keras: to nothing)
    _, none = fast(x, x, attention_mask=tf.zeros([2, 1, 5], tf.int32), return_attention_scores=True)
    np.testing.assert_allclose(none.numpy(), np.full([2, 2, 5, 5], 0.2), atol=1e-6)


def test_a_query_that_sees_no_key_attends_evenly_except_in_float16():
    # Scores of a few units (inputs of scale 4): -1e9 absorbs them in float32 and
    # bfloat16; float16's -3e4 (spacing 16) does not, as AdditiveMaskAttention says.
    x = np.random.default_rng(0).normal(scale=4.0, size=(1, 6, 8)).astype("float32")
    spread = {}
    for dtype in ("float32", "bfloat16", "float16"):
        keras.utils.set_random_seed(0)
        layer = kernels.AdditiveMaskAttention(num_heads=1, key_dim=8, dtype=dtype)
        _, probabilities = layer(
            x, x, attention_mask=np.zeros((1, 6, 6), bool), return_attention_scores=True
        )
        p = np.asarray(tf.cast(probabilities, tf.float32))[0, 0]  # [T, S]
        np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-2)
        spread[dtype] = float(p.max() - p.min())
    assert spread["float32"] < 1e-6 and spread["bfloat16"] < 1e-6
    assert spread["float16"] > 0.5
