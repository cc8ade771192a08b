"""The serving forward pass equals the Keras layers' forward pass, masks and segments included."""

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


def _inputs():
    rng = np.random.default_rng(2)
    ids = rng.integers(5, 60, size=(4, 11)).astype("int32")
    mask = np.ones_like(ids)
    mask[1, 7:] = 0
    mask[2, 3:] = 0
    mask[3, :] = 0  # no real token at all: Keras's masked softmax gives zero attention
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
    discriminator = _discriminator(*overrides)
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
        module = ServingModule(
            _discriminator(), ElectraTokenizer(str(vocab)), keras_layers=keras_layers
        )
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
