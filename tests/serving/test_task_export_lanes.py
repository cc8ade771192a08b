"""The fine-tuned export's lanes: each encoder block as independent chains (shares of the heads
and of the feed-forward units) that answer as the single chain and the Keras model do
(issue 57)."""

import json

import numpy as np
import pytest
import tensorflow as tf
from helpers import exported_classifier_and_tagger, served_ids

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.serving import inference
from electra_tf.tasks.export import LANES, TaskServingModule
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

TOKENS = list(SPECIAL_TOKENS) + "the food was good bad slow ada met bob in rome ##s".split()
TEXTS = ["ada met bob in rome", "the food was good , bad", "romes slow", "bob"]


def _encoder(heads=4, intermediate=32):
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=2, hidden_dim=16, embedding_dim=16,
        num_heads=heads, intermediate_dim=intermediate, max_sequence_length=16,
    )  # fmt: skip


def _built_encoder():
    tf.keras.utils.set_random_seed(5)
    encoder = _encoder()
    ids = tf.constant([[2, 7, 8, 9, 3, 0, 0], [2, 10, 3, 0, 0, 0, 0], [2, 11, 12, 13, 14, 3, 0]])
    mask = tf.cast(ids > 0, tf.int32)
    segments = tf.constant([[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 0]])
    inputs = {"token_ids": ids, "padding_mask": mask, "segment_ids": segments}
    return encoder, (ids, mask, segments), encoder(inputs, training=False).numpy()


def test_lane_weights_are_the_heads_and_units_shares():
    """Lane 1 of 2, block 0: its query/key/value columns are heads 2-3's of each kernel."""
    encoder, _, _ = _built_encoder()
    attention = encoder.transformer_layers[0]._self_attention_layer
    kernel, bias, units, unit_bias = inference.lane_weights(encoder, 2)[0][1]
    query = tf.reshape(attention._query_dense.kernel, [16, 16]).numpy()
    value_bias = tf.reshape(attention._value_dense.bias, [16]).numpy()
    intermediate = encoder.transformer_layers[0]._feedforward_intermediate_dense
    assert kernel.shape == (16, 24) and units.shape == (16, 16)
    np.testing.assert_array_equal(kernel.numpy()[:, :8], query[:, 8:])
    np.testing.assert_array_equal(bias.numpy()[16:], value_bias[8:])
    np.testing.assert_array_equal(units.numpy(), intermediate.kernel.numpy()[:, 16:])
    np.testing.assert_array_equal(unit_bias.numpy(), intermediate.bias.numpy()[16:])


@pytest.mark.parametrize("lanes", [1, 2, 4])
@pytest.mark.parametrize("packed", [False, True])
def test_lanes_give_the_keras_encoder_output(lanes, packed):
    """Against the Keras layers (an independent implementation) at every real token, and the
    first position alone (`first_only`), for 1, 2 and 4 lanes over 4 heads."""
    encoder, (ids, mask, segments), expected = _built_encoder()
    weights = None if lanes == 1 else inference.lane_weights(encoder, lanes)
    args = (encoder, ids, mask, segments)
    got = inference.encoder_sequence(*args, packed=packed, lanes=weights).numpy()
    got = got.reshape(expected.shape)
    real = mask.numpy().astype(bool)
    np.testing.assert_allclose(got[real], expected[real], rtol=0, atol=1e-5)
    first = inference.encoder_sequence(*args, packed=packed, first_only=True, lanes=weights)
    np.testing.assert_allclose(first.numpy(), expected[:, 0], rtol=0, atol=1e-5)


def test_bfloat16_lanes_stay_within_bfloat16_rounding():
    encoder, (ids, mask, segments), expected = _built_encoder()
    got = inference.encoder_sequence(
        encoder, ids, mask, segments, lanes=inference.lane_weights(encoder, 2), dtype=tf.bfloat16
    )  # fmt: skip
    gap = np.abs(got.numpy().reshape(expected.shape) - expected)[mask.numpy().astype(bool)].max()
    assert got.dtype == tf.float32 and 0 < gap < 0.1, gap


def test_lanes_that_do_not_split_evenly_are_refused():
    encoder, _, _ = _built_encoder()
    assert inference.lanes_fit(encoder, 4) and not inference.lanes_fit(encoder, 3)
    with pytest.raises(ValueError, match="3 lanes do not split 4 heads and 32 feed-forward"):
        inference.lane_weights(encoder, 3)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{kind: (model, {lanes: (version folder, its `serve` signature)})}: a classifier and a
    tagger, each exported with the default lanes and with one."""
    tf.keras.utils.set_random_seed(8)
    folder = tmp_path_factory.mktemp("lanes")
    return exported_classifier_and_tagger(folder, TOKENS, _encoder, "lanes", (None, 1))


@pytest.mark.parametrize("kind", ["classification", "tagging"])
def test_the_default_export_runs_two_lanes_and_answers_as_one_lane_and_keras(exports, kind):
    model, forms = exports[kind]
    packed = model.preprocessor.pack_all(TEXTS)
    ids = served_ids(model, TEXTS)
    two, one = (np.asarray(forms[lanes][1](**ids)["outputs"]) for lanes in (None, 1))
    np.testing.assert_allclose(two, one, rtol=0, atol=1e-5)
    logits = np.asarray(model(packed, training=False))
    if kind == "tagging":  # the served tags are per real token
        real = np.asarray(packed["padding_mask"]).astype(bool)
        two, logits = two[real], logits[real]
    np.testing.assert_allclose(two, logits, rtol=0, atol=1e-5)
    for lanes, expected in ((None, LANES), (1, 1)):
        config = json.loads((forms[lanes][0] / "assets.extra/electra_config.json").read_text())
        assert config["lanes"] == expected == (2 if lanes is None else 1)


def test_the_module_keeps_one_set_of_attention_copies(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{t}\n" for t in TOKENS))
    tf.keras.utils.set_random_seed(1)
    model = ElectraTextClassifier(
        _encoder(), ["a", "b"], "classification",
        ElectraTextClassifierPreprocessor(TOKENS, sequence_length=12),
    )  # fmt: skip
    model.build()
    two, one = TaskServingModule(model, vocab), TaskServingModule(model, vocab, lanes=1)
    assert (two.lanes, len(two.lane_weights), len(two.fused_attention_weights)) == (2, 2, 0)
    assert (one.lanes, len(one.lane_weights), len(one.fused_attention_weights)) == (1, 0, 2)
    assert TaskServingModule(model, vocab, jit_compile=True).lanes == 1
    with pytest.raises(ConfigError, match="lanes=2 applies to the plain SavedModel"):
        TaskServingModule(model, vocab, jit_compile=True, lanes=2)
    for bad in (0, 2.0, True):
        with pytest.raises(ConfigError, match="lanes must be a whole number"):
            TaskServingModule(model, vocab, lanes=bad)
    odd = ElectraTextClassifier(
        _encoder(heads=1, intermediate=31), ["a", "b"], "classification",
        ElectraTextClassifierPreprocessor(TOKENS, sequence_length=12),
    )  # fmt: skip
    odd.build()
    assert TaskServingModule(odd, vocab).lanes == 1  # the default falls back to one chain
