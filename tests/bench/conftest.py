"""Fixtures of the bench tests."""

import pytest


@pytest.fixture()
def encoder(tmp_path, request):
    """A tiny random BERT that both sides read (config.json, weights, vocab.txt), its
    vocabulary the test module's `WORDS`."""
    hf = pytest.importorskip("transformers")
    import torch

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *request.module.WORDS, "?", "."]
    config = hf.BertConfig(
        vocab_size=len(vocabulary), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    torch.manual_seed(0)
    folder = tmp_path / "encoder"
    hf.BertModel(config).save_pretrained(str(folder))
    (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in vocabulary))
    return str(folder)
