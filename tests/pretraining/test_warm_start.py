"""Continued pre-training (`pretrain --init`): what a run takes from its starting point."""

import json

import numpy as np
import pytest
import torch
import transformers as hf
from helpers import VOCAB, tiny_config, write_packed

from electra_tf.cli import main
from electra_tf.config import ConfigError, load_recipe
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.checkpoint import load_pretrainer, save_pretrainer
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.run import config_for_data
from electra_tf.pretraining.warm_start import apply_warm_start, config_for_warm_start
from electra_tf.tasks.initialization import load_warm_start

WORDS = [f"w{i}" for i in range(VOCAB - 5)]  # ids 5..63, as the packed test data


def _bert_folder(tmp_path):
    config = hf.BertConfig(
        vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    model = hf.BertModel(config).eval()
    folder = tmp_path / "bert"
    model.save_pretrained(str(folder))
    write_vocabulary(list(SPECIAL_TOKENS) + WORDS, folder / "vocab.txt")
    return folder, model


def test_a_bert_encoder_starts_the_discriminator_with_a_fresh_tied_generator(tmp_path):
    folder, theirs = _bert_folder(tmp_path)
    warm = load_warm_start(str(folder))
    assert warm.head_weights is None and warm.generator_weights is None
    config = config_for_warm_start(
        load_recipe("tiny").override("model.generator_size_fraction=0.5"), warm
    )
    model = config.model
    assert (model.num_layers, model.hidden_dim, model.embedding_dim) == (2, 16, 16)
    assert config.model.generator().hidden_dim == 8  # the run's fraction of the source's width
    assert config.data.vocab_file == str(folder / "vocab.txt") and config.data.mask_id == 4
    pretrainer = ElectraPretrainer(config)
    apply_warm_start(pretrainer, warm)
    for ours, weight in zip(pretrainer.discriminator.encoder.weights, warm.encoder_weights):
        np.testing.assert_array_equal(ours.numpy(), weight)
    # The generator reads the very embedding block the source's encoder brought.
    assert pretrainer.generator.encoder.embeddings is pretrainer.discriminator.encoder.embeddings
    table = pretrainer.generator.encoder.embeddings.token_embedding.embeddings.numpy()
    np.testing.assert_array_equal(table, theirs.embeddings.word_embeddings.weight.detach().numpy())


def test_an_own_run_brings_its_head_and_generator(tmp_path):
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + WORDS, tmp_path / "v.txt")
    source = ElectraPretrainer(tiny_config(f"data.vocab_file={vocab}"))
    rng = np.random.default_rng(0)
    for variable in source.trainable_variables:
        variable.assign(variable.numpy() + rng.normal(0, 0.1, variable.shape).astype("float32"))
    save_pretrainer(source, tmp_path / "source")
    warm = load_warm_start(str(tmp_path / "source"))
    config = config_for_warm_start(load_recipe("adapt"), warm)
    assert config.model.generator_size_fraction == 0.5  # the source's generator, not adapt's
    pretrainer = ElectraPretrainer(config)
    apply_warm_start(pretrainer, warm)
    for ours, theirs in zip(pretrainer.weights, source.weights, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_pretrain_init_trains_and_refuses_data_of_another_vocabulary(tmp_path):
    folder, _ = _bert_folder(tmp_path)
    data = write_packed(tmp_path / "data", n=48, seq=16, shards=2)
    write_vocabulary(list(SPECIAL_TOKENS) + WORDS, tmp_path / "data" / "vocab.txt")
    manifest = json.loads((tmp_path / "data" / "manifest.json").read_text())
    manifest["vocab_file"] = "vocab.txt"
    (tmp_path / "data" / "manifest.json").write_text(json.dumps(manifest))
    common = ["--data", data, "--output-dir", str(tmp_path / "run"), "--verbose", "0"]
    small = ["--set", "train.batch_size=4", "--set", "data.sequence_length=16"]
    assert main(["pretrain", "--init", str(folder), "--steps", "2", *common, *small]) == 0
    run = load_pretrainer(tmp_path / "run")
    assert run.config.model.hidden_dim == 16 and run.optimizer.iterations.numpy() == 2
    assert run.config.data.vocab_file == str(folder / "vocab.txt")
    # Data packed with another vocabulary: refused in one sentence, nothing trained.
    write_vocabulary(list(SPECIAL_TOKENS) + WORDS[::-1], tmp_path / "data" / "vocab.txt")
    with pytest.raises(ConfigError, match="was made with the vocabulary .* not the starting"):
        config = config_for_data(load_recipe("adapt").override(f"data.train_files={data}"))
        config_for_warm_start(config, load_warm_start(str(folder)))
