"""Released-weight importers and the keras-hub preset, against independent implementations."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import structured_ids, tiny_config

from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.conversion import (
    export_hugging_face,
    export_reference_checkpoint,
    import_hugging_face,
    import_reference_checkpoint,
    reference_names,
)
from electra_tf.serving.keras_hub_preset import (
    compare_with_keras_hub,
    read_keras_hub_preset,
    write_keras_hub_preset,
)

SIZES = [
    "model.num_layers=2",
    "model.hidden_dim=16",
    "model.embedding_dim=8",
    "model.num_heads=2",
    "model.intermediate_dim=32",
    "model.generator_size_fraction=0.5",
    "model.max_sequence_length=32",
]


def _model(*overrides, seed=0):
    keras.utils.set_random_seed(seed)
    model = ElectraPretrainer(tiny_config(*SIZES, *overrides))
    rng = np.random.default_rng(seed)
    for v in model.trainable_variables:
        v.assign(v.numpy() + rng.normal(0, 0.05, v.shape).astype("float32"))
    return model


def _features(seed=0):
    ids, mask, segments = structured_ids(3, 12, seed=seed)
    return {
        "token_ids": ids.astype("int32"),
        "padding_mask": mask.astype("int32"),
        "segment_ids": segments.astype("int32"),
    }


def _outputs(model, features):
    positions = np.array([[1, 2], [3, 5], [4, 6]], np.int32)
    disc = np.asarray(model.discriminator(features, training=False))
    gen = np.asarray(model.generator({**features, "mask_positions": positions}, training=False))
    return disc, gen, positions


def _write_reference(path, names_and_values):
    tf.raw_ops.SaveV2(
        prefix=str(path),
        tensor_names=list(names_and_values),
        shape_and_slices=[""] * len(names_and_values),
        tensors=[tf.constant(v) for v in names_and_values.values()],
    )


def test_reference_names_and_shapes_are_the_documented_ones():
    model = _model()
    table = {
        name: (tuple(shape) if shape else tuple(variable.shape))
        for name, variable, shape in reference_names(model)
    }
    expected = {
        "electra/embeddings/word_embeddings": (64, 8),
        "electra/embeddings/position_embeddings": (32, 8),
        "electra/embeddings/token_type_embeddings": (2, 8),
        "electra/embeddings/LayerNorm/gamma": (8,),
        "electra/embeddings_project/kernel": (8, 16),
        "electra/encoder/layer_1/attention/self/query/kernel": (16, 16),
        "electra/encoder/layer_1/attention/self/value/bias": (16,),
        "electra/encoder/layer_0/attention/output/dense/kernel": (16, 16),
        "electra/encoder/layer_0/attention/output/LayerNorm/beta": (16,),
        "electra/encoder/layer_0/intermediate/dense/kernel": (16, 32),
        "electra/encoder/layer_0/output/dense/kernel": (32, 16),
        "generator/embeddings_project/kernel": None,
        "generator/encoder/layer_0/attention/self/key/kernel": (8, 8),
        "generator/encoder/layer_1/intermediate/dense/kernel": (8, 32),
        "generator_predictions/dense/kernel": (8, 8),
        "generator_predictions/LayerNorm/gamma": (8,),
        "generator_predictions/output_bias": (64,),
        "discriminator_predictions/dense/kernel": (16, 16),
        "discriminator_predictions/dense_1/kernel": (16, 1),
        "discriminator_predictions/dense_1/bias": (1,),
    }
    for name, shape in expected.items():
        if shape is None:
            assert name not in table  # the generator's hidden (8) equals E: no projection
            continue
        assert table[name] == shape, name
    # Every trainable variable of the pretrainer has exactly one reference name.
    assert len(table) == len(model.trainable_variables)
    assert not any(n.startswith("generator/embeddings/") for n in table)  # tied: shared block


def test_reference_checkpoint_round_trip_skips_optimizer_slots(tmp_path):
    model = _model()
    path = export_reference_checkpoint(model, tmp_path / "ref" / "model.ckpt-100")
    reader = tf.train.load_checkpoint(path)
    values = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
    # Add what the reference's files also hold: Adam slots and the step, which are not weights.
    for name in list(values)[:5]:
        values[f"{name}/adam_m"] = np.zeros_like(values[name])
        values[f"{name}/adam_v"] = np.ones_like(values[name])
    values["global_step"] = np.array(100, np.int64)
    _write_reference(tmp_path / "full" / "model.ckpt-100", values)
    imported = import_reference_checkpoint(tmp_path / "full" / "model.ckpt-100")
    assert imported.config.model.num_heads == 1  # derived as hidden // 64 (at least 1)
    features = _features()
    # With the derived config (1 head instead of 2) the outputs differ; with the right head
    # count they are equal.
    exact = import_reference_checkpoint(tmp_path / "full" / "model.ckpt-100", num_heads=2)
    cfg = exact.config.model
    assert (cfg.hidden_dim, cfg.embedding_dim, cfg.num_layers, cfg.intermediate_dim) == (
        16,
        8,
        2,
        32,
    )
    assert cfg.generator_size_fraction == 0.5 and cfg.weight_tying == "embeddings"
    for ours, theirs in zip(_outputs(model, features)[:2], _outputs(exact, features)[:2]):
        np.testing.assert_allclose(theirs, ours, atol=1e-6)
    different = _outputs(imported, features)[0]
    assert np.abs(different - _outputs(model, features)[0]).max() > 1e-6


def test_reference_import_reports_a_missing_variable(tmp_path):
    model = _model()
    path = export_reference_checkpoint(model, tmp_path / "ref" / "model.ckpt-1")
    reader = tf.train.load_checkpoint(path)
    values = {
        n: reader.get_tensor(n)
        for n in reader.get_variable_to_shape_map()
        if n != "electra/encoder/layer_1/output/dense/bias"
    }
    _write_reference(tmp_path / "broken" / "model.ckpt-1", values)
    from electra_tf.config import ConfigError

    with pytest.raises(ConfigError, match="has no electra/encoder/layer_1/output/dense/bias"):
        import_reference_checkpoint(tmp_path / "broken" / "model.ckpt-1", num_heads=2)


def test_hugging_face_round_trip_equals_transformers(tmp_path):
    import torch
    import transformers as hf

    model = _model()
    folders = export_hugging_face(model, tmp_path / "hf")
    features = _features()
    disc, gen, positions = _outputs(model, features)
    with torch.no_grad():
        theirs = hf.ElectraForPreTraining.from_pretrained(str(folders["discriminator"])).eval()
        logits = theirs(
            input_ids=torch.tensor(features["token_ids"]).long(),
            attention_mask=torch.tensor(features["padding_mask"]).long(),
            token_type_ids=torch.tensor(features["segment_ids"]).long(),
        ).logits.numpy()
        generator = hf.ElectraForMaskedLM.from_pretrained(str(folders["generator"])).eval()
        mlm = generator(
            input_ids=torch.tensor(features["token_ids"]).long(),
            attention_mask=torch.tensor(features["padding_mask"]).long(),
            token_type_ids=torch.tensor(features["segment_ids"]).long(),
        ).logits.numpy()
    real = features["padding_mask"].astype(bool)
    np.testing.assert_allclose(logits[real], disc[real], atol=1e-5)
    np.testing.assert_allclose(np.take_along_axis(mlm, positions[..., None], 1), gen, atol=1e-5)
    # And back: transformers' files imported into a fresh pretrainer.
    imported = import_hugging_face(folders["discriminator"], folders["generator"])
    for ours, again in zip((disc, gen), _outputs(imported, features)[:2]):
        np.testing.assert_allclose(again, ours, atol=1e-6)


def test_hugging_face_weights_written_by_transformers_import(tmp_path):
    import torch
    import transformers as hf

    torch.manual_seed(0)
    config = hf.ElectraConfig(
        vocab_size=64,
        embedding_size=8,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        hidden_act="gelu",
    )
    theirs = hf.ElectraForPreTraining(config).eval()
    with torch.no_grad():
        for parameter in theirs.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.05)
    theirs.save_pretrained(str(tmp_path / "safetensors"))
    torch.save(theirs.state_dict(), tmp_path / "pytorch_model.bin")
    (tmp_path / "bin").mkdir()
    (tmp_path / "pytorch_model.bin").rename(tmp_path / "bin" / "pytorch_model.bin")
    (tmp_path / "bin" / "config.json").write_text(json.dumps(config.to_dict()))
    features = _features(seed=4)
    with torch.no_grad():
        expected = theirs(
            input_ids=torch.tensor(features["token_ids"]).long(),
            attention_mask=torch.tensor(features["padding_mask"]).long(),
            token_type_ids=torch.tensor(features["segment_ids"]).long(),
        ).logits.numpy()
    real = features["padding_mask"].astype(bool)
    for folder in ("safetensors", "bin"):
        ours = import_hugging_face(tmp_path / folder)
        logits = np.asarray(ours.discriminator(features, training=False))
        np.testing.assert_allclose(logits[real], expected[real], atol=1e-5)


def test_keras_hub_preset_loads_offline_and_reads_back(tmp_path):
    import keras_hub

    model = _model()
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + [f"w{i}" for i in range(59)], tmp_path / "v.txt"
    )
    preset = write_keras_hub_preset(model, tmp_path / "preset", vocab_file=vocab)
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(preset))
    tokenizer = keras_hub.models.ElectraTokenizer.from_preset(str(preset))
    assert tokenizer.vocabulary_size() == 64
    features = _features()
    ours = np.asarray(model.discriminator.encoder(features, training=False))
    theirs = backbone(features, training=False)
    real = features["padding_mask"].astype(bool)
    difference = np.abs(np.asarray(theirs["sequence_output"]) - ours)[real]
    assert 0 < difference.max() < 1e-2  # tanh-approximate GELU: close, not equal
    np.testing.assert_allclose(np.asarray(theirs["pooled_output"]), np.tanh(ours[:, 0]), atol=1e-2)
    back = read_keras_hub_preset(preset)
    np.testing.assert_allclose(np.asarray(back(features, training=False)), ours, atol=1e-6)
    report = compare_with_keras_hub(model, features)
    assert report["sequence_output_max_abs_diff"] == pytest.approx(difference.max(), rel=1e-3)
