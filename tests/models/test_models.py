import keras
import numpy as np
import pytest
from helpers import structured_ids, tiny_config
from numpy_reference import discriminator_forward, gelu, generator_forward, layer_norm

from electra_tf.layers.embeddings import ElectraEmbeddings
from electra_tf.layers.heads import ReplacedTokenDetectionHead
from electra_tf.models import ElectraDiscriminator, ElectraEncoder, ElectraGenerator
from electra_tf.pretraining.pretrainer import ElectraPretrainer

SIZES = dict(
    vocabulary_size=30,
    num_layers=2,
    hidden_dim=8,
    embedding_dim=4,
    num_heads=2,
    intermediate_dim=16,
    max_sequence_length=12,
    dropout=0.1,
)


def _inputs(batch=3, length=10, seed=0):
    ids, mask, segments = structured_ids(batch, length, vocab=30, seed=seed)
    mask[0, 7:] = 0
    ids[0, 7:] = 0
    return {
        "token_ids": ids.astype("int32"),
        "segment_ids": segments.astype("int32"),
        "padding_mask": mask.astype("int32"),
    }


def _randomize(model, seed=0):
    """Non-trivial LayerNorm and bias values, so the comparison exercises every weight."""
    rng = np.random.default_rng(seed)
    for v in model.trainable_variables:
        v.assign(v.numpy() + rng.normal(0, 0.1, v.shape).astype("float32"))


def test_embeddings_are_word_plus_position_plus_segment_then_layernorm():
    layer = ElectraEmbeddings(
        vocabulary_size=10, embedding_dim=4, max_sequence_length=6, dropout=0.5
    )
    ids = np.array([[1, 2, 3]], "int32")
    segments = np.array([[0, 1, 1]], "int32")
    out = np.asarray(layer(ids, segments, training=False))
    word = layer.token_embedding.embeddings.numpy()
    pos = layer.position_embedding.embeddings.numpy()
    seg = layer.segment_embedding.embeddings.numpy()
    expected = layer_norm(word[ids] + pos[:3][None] + seg[segments], 1.0, 0.0)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert ElectraEmbeddings.from_config(layer.get_config()).get_config() == layer.get_config()


def test_initializer_is_truncated_normal_with_std_002():
    encoder = ElectraEncoder(
        **{**SIZES, "hidden_dim": 64, "intermediate_dim": 256, "num_layers": 1}
    )
    encoder.build()
    kernel = encoder.transformer_layers[0]._feedforward_intermediate_dense.kernel.numpy()
    assert np.abs(kernel).max() <= 0.04 + 1e-6  # truncated at two standard deviations
    assert 0.014 < kernel.std() < 0.02  # a normal truncated at 2 std has std 0.88 * 0.02
    assert np.all(encoder.transformer_layers[0]._feedforward_intermediate_dense.bias.numpy() == 0)


def test_the_two_layers_built_without_an_initializer_start_as_in_the_reference():
    # The reference builds embeddings_project and the detection head's 1-unit output
    # without an initializer, so TF1 gives them Glorot uniform: |w| <= sqrt(6 / (in + out)),
    # std = that limit / sqrt(3). "truncated_normal" (Hugging Face's) is std 0.02 for both.
    sizes = {**SIZES, "embedding_dim": 64, "hidden_dim": 256, "intermediate_dim": 64}
    for initialization, check in (("reference", "glorot"), ("truncated_normal", "normal")):
        keras.utils.set_random_seed(0)
        discriminator = ElectraDiscriminator(initialization=initialization, **sizes)
        discriminator.build()
        project = discriminator.encoder.embeddings_project.kernel.numpy()  # [64, 256]
        output = discriminator.rtd_head.dense_prediction.kernel.numpy()  # [256, 1]
        hidden = discriminator.rtd_head.dense.kernel.numpy()  # [256, 256]: always 0.02
        assert 0.014 < hidden.std() < 0.02
        for kernel in (project, output):
            fan_in, fan_out = kernel.shape
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            if check == "glorot":
                assert np.abs(kernel).max() <= limit
                assert kernel.std() == pytest.approx(limit / np.sqrt(3.0), rel=0.15)
            else:
                assert np.abs(kernel).max() <= 0.04 + 1e-6 and 0.012 < kernel.std() < 0.02
    config = tiny_config()
    assert config.model.initialization == "reference"
    assert (
        tiny_config("model.initialization=truncated_normal").model.discriminator().initialization
        == "truncated_normal"
    )


def test_discriminator_equals_an_independent_numpy_implementation():
    model = ElectraDiscriminator(**SIZES)
    _randomize(model)
    inputs = _inputs()
    ours = np.asarray(model(inputs, training=False))
    theirs = discriminator_forward(
        model, inputs["token_ids"], inputs["segment_ids"], inputs["padding_mask"]
    )
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(ours[real], theirs[real], atol=1e-5)


def test_generator_scores_the_vocabulary_only_at_masked_positions():
    model = ElectraGenerator(**{**SIZES, "hidden_dim": 4, "num_heads": 1, "intermediate_dim": 8})
    _randomize(model, seed=1)
    inputs = _inputs()
    positions = np.array([[1, 3], [2, 2], [5, 8]], "int32")
    logits = np.asarray(model({**inputs, "mask_positions": positions}, training=False))
    assert logits.shape == (3, 2, 30)
    theirs = generator_forward(
        model, inputs["token_ids"], inputs["segment_ids"], inputs["padding_mask"], positions
    )
    np.testing.assert_allclose(logits, theirs, atol=1e-5)
    # The output layer is the word table: no separate vocabulary kernel exists.
    table = model.encoder.embeddings.token_embedding.embeddings
    assert model.mlm_head.token_embedding.embeddings is table
    assert not any("output_kernel" in v.path for v in model.trainable_variables)


def test_rtd_head_is_dense_gelu_then_dense_one():
    head = ReplacedTokenDetectionHead(hidden_dim=3)
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float32")
    out = np.asarray(head(x))
    w1, b1 = head.dense.kernel.numpy(), head.dense.bias.numpy()
    w2, b2 = head.dense_prediction.kernel.numpy(), head.dense_prediction.bias.numpy()
    np.testing.assert_allclose(out, (gelu(x @ w1 + b1) @ w2 + b2)[..., 0], atol=1e-6)


@pytest.mark.parametrize("tying", ["none", "embeddings", "all"])
def test_weight_tying_options(tying):
    extra = ["model.generator_size_fraction=1.0"] if tying == "all" else []
    pretrainer = ElectraPretrainer(tiny_config(f"model.weight_tying={tying}", *extra))
    gen, disc = pretrainer.generator, pretrainer.discriminator
    shared_embeddings = gen.encoder.embeddings is disc.encoder.embeddings
    assert shared_embeddings == (tying != "none")
    assert (gen.encoder is disc.encoder) == (tying == "all")
    gen_ids = {id(v) for v in gen.trainable_variables}
    disc_ids = {id(v) for v in disc.trainable_variables}
    union = {id(v) for v in pretrainer.trainable_variables}
    assert union == gen_ids | disc_ids and len(pretrainer.trainable_variables) == len(union)
    if tying == "embeddings":
        # word, position, segment tables and the embedding LayerNorm: 5 shared variables.
        assert len(gen_ids & disc_ids) == 5
    # Each encoder keeps its own projection when E != H.
    assert gen.encoder.embeddings_project is not disc.encoder.embeddings_project or tying == "all"


def test_models_round_trip_through_keras_saving(tmp_path):
    model = ElectraDiscriminator(**SIZES)
    inputs = _inputs()
    before = np.asarray(model(inputs))
    path = str(tmp_path / "discriminator.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(np.asarray(loaded(inputs)), before, atol=1e-6)
    assert loaded.get_config() == model.get_config()
    encoder = ElectraEncoder.from_config(model.encoder.get_config())
    assert encoder.get_config() == model.encoder.get_config()


def test_the_encoder_keeps_its_weights_in_the_order_every_checkpoint_holds_them(tmp_path):
    """Weights files and `tf.train.Checkpoint`s of runs already made read the encoder's
    weights by this order and these names: embeddings, the E-to-H projection, then each
    block's attention, its two LayerNorms and its feed-forward pair. And a weights file
    written by one encoder loads into another drawn from another seed, to the same outputs."""
    from electra_tf.models.encoder import ElectraEncoder

    def encoder(seed):
        keras.utils.set_random_seed(seed)
        return ElectraEncoder(vocabulary_size=10, num_layers=2, hidden_dim=8, embedding_dim=4,
                              num_heads=2, intermediate_dim=16, max_sequence_length=8)  # fmt: skip

    dense, norm = ("kernel", "bias"), ("gamma", "beta")
    block = [
        *(f"self_attention_layer/{p}/{w}" for p in ("query", "key", "value", "attention_output")
          for w in dense),
        *(f"{n}_layer_norm/{w}" for n in ("self_attention", "feedforward") for w in norm),
        *(f"feedforward_{d}_dense/{w}" for d in ("intermediate", "output") for w in dense),
    ]  # fmt: skip
    expected = [
        *(f"embeddings/{n}_embeddings/embeddings" for n in ("word", "position", "token_type")),
        "embeddings/layer_norm/gamma", "embeddings/layer_norm/beta",
        "embeddings_project/kernel", "embeddings_project/bias",
        *(f"transformer_layer_{i}/{name}" for i in range(2) for name in block),
    ]  # fmt: skip
    first = encoder(1)
    first.build()
    assert [w.path for w in first.weights] == [f"{first.name}/{p}" for p in expected]
    ids = np.array([[1, 5, 6, 2, 0], [1, 7, 8, 9, 2]], "int32")
    inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids > 0}
    first.save_weights(tmp_path / "encoder.weights.h5")
    second = encoder(2)
    second.build()
    assert not np.allclose(second(inputs), first(inputs))
    second.load_weights(tmp_path / "encoder.weights.h5")
    np.testing.assert_array_equal(second(inputs), first(inputs))
