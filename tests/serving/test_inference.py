"""The serving forward pass equals the Keras layers' forward pass, masks and segments included."""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import tiny_config

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving import inference
from electra_tf.serving.saved_model import ServingModule, float32_discriminator


def _discriminator(*overrides):
    keras.utils.set_random_seed(5)
    model = ElectraPretrainer(tiny_config("model.num_layers=2", *overrides))
    discriminator = float32_discriminator(model)
    rng = np.random.default_rng(1)
    for v in discriminator.weights:  # non-trivial weights everywhere (biases, LayerNorms too)
        v.assign(v.numpy() + rng.normal(0, 0.2, v.shape).astype("float32"))
    return discriminator


@functools.cache
def _shared(*overrides):
    """`_discriminator(*overrides)`, built once per module for the tests that only read it
    (the same seed and weights as a fresh one); a test that changes it builds its own."""
    return _discriminator(*overrides)


def _inputs():
    rng = np.random.default_rng(2)
    ids = rng.integers(5, 60, size=(4, 11)).astype("int32")
    mask = np.ones_like(ids)
    mask[1, 7:] = 0
    mask[2, 3:] = 0
    mask[3, :] = 0  # no real token at all: the additive mask attends evenly, in both
    segments = np.zeros_like(ids)
    segments[:, 5:] = 1
    return ids, mask, segments


def _keras_outputs(discriminator, ids, mask, segments):
    inputs = {"token_ids": ids, "padding_mask": mask, "segment_ids": segments}
    sequence = discriminator.encoder(inputs, training=False)
    logits = discriminator.rtd_head(sequence)
    return {"rtd_logits": logits, "sequence_output": sequence}


@pytest.mark.parametrize("overrides", [(), ("model.embedding_dim=16",)])
def test_serving_forward_equals_the_keras_layers(overrides):
    discriminator = _shared(*overrides)
    assert inference.supports(discriminator)
    assert (discriminator.encoder.embeddings_project is None) == bool(overrides)
    ids, mask, segments = _inputs()
    expected = _keras_outputs(discriminator, ids, mask, segments)
    forward = tf.function(lambda *a: inference.discriminator_outputs(discriminator, *a))
    ours = forward(tf.constant(ids), tf.constant(mask), tf.constant(segments))
    np.testing.assert_allclose(ours["rtd_logits"], expected["rtd_logits"], atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(
        ours["sequence_output"], expected["sequence_output"], atol=2e-5, rtol=1e-5
    )
    np.testing.assert_allclose(
        ours["pooled_output"], expected["sequence_output"][:, 0, :], atol=2e-5, rtol=1e-5
    )
    np.testing.assert_allclose(
        ours["rtd_probabilities"], tf.sigmoid(expected["rtd_logits"]), atol=1e-6
    )
    # The query/key/value kernels concatenated once, as a serving module keeps them.
    fused = [[tf.Variable(w) for w in pair] for pair in inference.fused_qkv(discriminator.encoder)]
    assert len(fused) == len(discriminator.encoder.transformer_layers)
    assert fused[0][0].shape == (16, 48) and fused[0][1].shape == (48,)  # hidden 16
    again = tf.function(lambda *a: inference.discriminator_outputs(discriminator, *a, fused))(
        tf.constant(ids), tf.constant(mask), tf.constant(segments)
    )
    np.testing.assert_allclose(again["rtd_logits"], ours["rtd_logits"], atol=1e-6)
    # The check can fail: the padding mask changes real positions' outputs.
    unmasked = _keras_outputs(discriminator, ids, np.ones_like(mask), segments)
    assert np.abs(unmasked["rtd_logits"][1, :7] - ours["rtd_logits"][1, :7]).max() > 1e-3


def test_a_block_it_cannot_reproduce_falls_back_to_keras():
    discriminator = _discriminator()
    discriminator.encoder.transformer_layers[1].normalize_first = True  # pre-LayerNorm block
    assert not inference.supports(discriminator)
    config = discriminator.get_config()
    config.pop("name", None)
    assert not inference.supports(ElectraDiscriminator(**config))  # not built
    module = ServingModule.__new__(ServingModule)  # only the forward pass, no tokenizer
    module.discriminator, module._keras_layers = discriminator, False
    ids, mask, segments = _inputs()
    inputs = {"token_ids": ids[:3], "padding_mask": mask[:3], "segment_ids": segments[:3]}
    expected = _keras_outputs(discriminator, ids[:3], mask[:3], segments[:3])
    np.testing.assert_allclose(
        module._encode(inputs)["rtd_logits"], expected["rtd_logits"], atol=1e-6
    )
    # ... and the pre-LayerNorm block really computes something else.
    ours = inference.discriminator_outputs(discriminator, ids[:3], mask[:3], segments[:3])
    assert np.abs(ours["rtd_logits"] - expected["rtd_logits"]).max() > 1e-3


def test_every_use_of_an_input_waits_for_the_input_checks(tmp_path):
    """The checks run before anything reads an input: a bad segment id is reported, not gathered.

    Which of two unordered ops runs first is up to the executor, so this is checked on
    the graph: each consumer of an input placeholder is part of a check or an Identity
    that waits for the checks.
    """
    from electra_tf.data.tokenizer import ElectraTokenizer
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

    vocab = write_vocabulary(list(SPECIAL_TOKENS) + ["a", "b"], tmp_path / "vocab.txt")
    for keras_layers in (False, True):
        module = ServingModule(_shared(), ElectraTokenizer(str(vocab)), keras_layers=keras_layers)
        graph = module.serve.get_concrete_function().graph
        # the serving pass reads the module's fused attention kernels: no concatenation per call
        concats = [op for op in graph.get_operations() if op.type == "ConcatV2"]
        assert (
            bool(concats) == keras_layers and bool(module.fused_attention_weights) != keras_layers
        )
        asserts = [op for op in graph.get_operations() if op.type == "Assert"]
        assert len(asserts) >= 8
        checks, stack = set(), list(asserts)
        while stack:  # every op an Assert depends on
            op = stack.pop()
            if op not in checks:
                checks.add(op)
                stack.extend(tensor.op for tensor in op.inputs)
        for name in ("input_word_ids", "input_mask", "input_type_ids"):
            placeholder = graph.get_operation_by_name(name).outputs[0]
            consumers = placeholder.consumers()
            assert consumers
            for op in consumers:
                waits = op.type == "Identity" and op.control_inputs
                assert op in checks or waits, f"{name} is read by {op.type} before the checks"


def test_transposed_wide_kernels_give_the_same_outputs():
    """ELECTRA-Small's 256 -> 1024 layer shape, scaled down: kernels read stored transposed."""
    discriminator = _shared("model.intermediate_dim=1024")
    encoder = discriminator.encoder
    assert inference.widens_narrow_input(encoder)
    assert not inference.widens_narrow_input(_shared().encoder)  # 16 -> 32
    transposed = inference.transposed_wide_kernels(encoder)
    assert len(transposed) == len(encoder.transformer_layers)
    first = encoder.transformer_layers[0]._feedforward_intermediate_dense.kernel.numpy()
    np.testing.assert_array_equal(transposed[0], first.T)
    ids, mask, segments = [tf.constant(a) for a in _inputs()]
    plain = inference.discriminator_outputs(discriminator, ids, mask, segments)
    ours = tf.function(
        lambda *a: inference.discriminator_outputs(discriminator, *a, None, transposed)
    )
    result = ours(ids, mask, segments)
    np.testing.assert_allclose(result["rtd_logits"], plain["rtd_logits"], atol=1e-5)
    np.testing.assert_allclose(result["sequence_output"], plain["sequence_output"], atol=1e-5)
    # The graph multiplies by them with transpose_b and never transposes them per call.
    graph = ours.get_concrete_function(ids, mask, segments).graph
    products = [op for op in graph.get_operations() if op.type == "MatMul"]
    assert sum(op.get_attr("transpose_b") for op in products) == len(transposed)
    # The check can fail: the kernels' transposes are what is read.
    wrong = [tf.zeros_like(kernel) for kernel in transposed]
    zeroed = inference.discriminator_outputs(discriminator, ids, mask, segments, None, wrong)
    assert np.abs(zeroed["rtd_logits"] - plain["rtd_logits"]).max() > 1e-3


def test_the_serving_module_stores_transposed_kernels_by_layout(tmp_path, monkeypatch):
    from electra_tf.data.tokenizer import ElectraTokenizer
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
    from electra_tf.layers import kernels

    tokenizer = ElectraTokenizer(
        str(write_vocabulary(list(SPECIAL_TOKENS) + ["a", "b"], tmp_path / "vocab.txt"))
    )
    wide = _shared("model.intermediate_dim=1024")
    # Without the all-padding row, which the serving checks refuse.
    ids, mask, segments = [tf.constant(a[:3]) for a in _inputs()]
    outputs = {}
    for layout in ("transposed", "plain"):
        module = ServingModule(wide, tokenizer, kernel_layout=layout)
        assert module.kernel_layout == layout
        stored = module.transposed_wide_kernels
        assert len(stored) == (2 if layout == "transposed" else 0)
        saved = {id(v) for v in module.variables}
        assert all(v.shape == (1024, 16) and id(v) in saved for v in stored)
        outputs[layout] = module.serve(ids, mask, segments)["rtd_logits"]
    np.testing.assert_allclose(outputs["transposed"], outputs["plain"], atol=1e-5)
    # "auto" follows oneDNN's instruction set; a layer that does not widen stays plain.
    monkeypatch.setattr(kernels, "onednn_runs_avx2", lambda: True)
    assert ServingModule(wide, tokenizer).kernel_layout == "transposed"
    two = ServingModule(wide, tokenizer, lanes=2)  # the lanes read copies of their own
    assert (two.lanes, two.kernel_layout, two.transposed_wide_kernels) == (2, "plain", [])
    assert ServingModule(_shared(), tokenizer).kernel_layout == "plain"
    assert ServingModule(wide, tokenizer, keras_layers=True).transposed_wide_kernels == []
    assert ServingModule(wide, tokenizer, jit_compile=True).kernel_layout == "plain"  # XLA's dot
    monkeypatch.setattr(kernels, "onednn_runs_avx2", lambda: False)
    assert ServingModule(wide, tokenizer).kernel_layout == "plain"
    with pytest.raises(ValueError, match="kernel_layout must be one of"):
        ServingModule(wide, tokenizer, kernel_layout="sideways")


def test_rows_kept_are_the_real_tokens_and_each_first_position():
    mask = tf.constant([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]])
    # b * 4 + s: row 0 keeps 0, 1; row 1 keeps 4 (its first position), 5, 6; row 2 keeps 8.
    assert inference.rows_kept(mask).numpy().tolist() == [0, 1, 4, 5, 6, 8]
    floats = tf.constant([[1.0, 0.4, 0.6]])  # above 0.5, as mask_bias reads a float mask
    assert inference.rows_kept(floats).numpy().tolist() == [0, 2]
    assert inference.rows_kept(tf.constant([[False, True]])).numpy().tolist() == [0, 1]


def test_the_packed_grid_reads_each_kept_row_in_place_and_the_last_one_before_a_gap():
    mask = tf.constant([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]])
    # kept (rows_kept): 0, 1, 4, 5, 6, 8 are packed rows 0-5; 2 and 3 read row 1 (flat 1),
    # 7 reads row 4 (flat 6), 9-11 read row 5 (flat 8).
    grid = inference.packed_grid(mask).numpy()
    assert grid.tolist() == [0, 1, 1, 1, 2, 3, 4, 4, 5, 5, 5, 5]
    kept = inference.rows_kept(mask).numpy()
    np.testing.assert_array_equal(kept[grid][kept], kept)  # a kept position reads itself


@pytest.mark.parametrize("overrides", [(), ("model.embedding_dim=16",)])
def test_the_packed_pass_equals_the_padded_pass_on_kept_rows(overrides):
    discriminator = _shared(*overrides)
    encoder = discriminator.encoder
    ids, mask, segments = _inputs()
    mask[3, :] = 1  # every row has a real token here; and one with a hole in the middle
    mask[0, 4:6] = 0
    mask[0, 0] = 0  # a masked first position is still computed, as the [CLS] head reads it
    args = (tf.constant(ids), tf.constant(mask), tf.constant(segments))
    padded = tf.function(lambda *a: inference.encoder_sequence(encoder, *a))(*args).numpy()
    run = tf.function(lambda *a: inference.encoder_sequence(encoder, *a, packed=True))
    packed = run(*args).numpy()
    kept = inference.rows_kept(mask).numpy()
    assert len(kept) == mask.sum() + 1  # the real tokens, and row 0's masked first position
    np.testing.assert_allclose(packed[kept], padded[kept], atol=1e-5, rtol=1e-5)
    others = np.setdiff1d(np.arange(ids.size), kept)
    assert np.abs(padded[others]).max() > 0.1  # the padded pass computes padding rows
    np.testing.assert_array_equal(packed[others], 0.0)  # the packed pass does not
    # Against the Keras layers: the kept rows are what the model computes for those tokens.
    keras_sequence = _keras_outputs(discriminator, ids, mask, segments)["sequence_output"]
    flat = np.reshape(keras_sequence, [ids.size, -1])
    np.testing.assert_allclose(packed[kept], flat[kept], atol=2e-5, rtol=1e-5)


@pytest.mark.parametrize("packed", [False, True])
def test_the_first_position_pass_equals_the_first_rows(packed):
    """`first_only`: `[B, H]`, each sequence's first row of the full pass (padded or packed),
    a masked first position included."""
    encoder = _shared().encoder
    ids, mask, segments = _inputs()
    mask[0, 0] = 0
    args = (tf.constant(ids), tf.constant(mask), tf.constant(segments))
    full = tf.function(lambda *a: inference.encoder_sequence(encoder, *a, packed=packed))
    first = tf.function(
        lambda *a: inference.encoder_sequence(encoder, *a, packed=packed, first_only=True)
    )
    rows = full(*args).numpy().reshape(ids.shape[0], ids.shape[1], -1)
    got = first(*args).numpy()
    assert got.shape == (ids.shape[0], encoder.hidden_dim)
    np.testing.assert_allclose(got, rows[:, 0], atol=1e-5, rtol=1e-5)
