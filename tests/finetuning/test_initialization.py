"""Every initialization source gives the same encoder weights."""

import numpy as np
import pytest

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.tasks.initialization import load_initialization


def test_initialization_sources_agree(tmp_path, monkeypatch):
    """...and none of them draws random initial values for weights it then overwrites."""
    from helpers import tiny_config

    from electra_tf.layers import initializers
    from electra_tf.pretraining.checkpoint import save_pretrainer
    from electra_tf.pretraining.pretrainer import ElectraPretrainer
    from electra_tf.serving.conversion import export_hugging_face
    from electra_tf.serving.hub import export_hub
    from electra_tf.serving.keras_hub_preset import write_keras_hub_preset
    from electra_tf.serving.reference_checkpoint import export_reference_checkpoint
    from electra_tf.serving.saved_model import export_for_serving

    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + [f"w{i}" for i in range(59)], tmp_path / "v.txt"
    )
    model = ElectraPretrainer(tiny_config(f"data.vocab_file={vocab}", "model.num_layers=2"))
    save_pretrainer(model, tmp_path / "run")
    export_for_serving(model, tmp_path / "serving", vocab_file=vocab, warmup=False)
    export_hub(model, tmp_path / "hub", vocab_file=vocab, with_mlm=False)
    write_keras_hub_preset(model, tmp_path / "preset", vocab_file=vocab)
    hf = export_hugging_face(model, tmp_path / "hf")
    ckpt = export_reference_checkpoint(model, tmp_path / "ref" / "model.ckpt-1")
    expected = [w.numpy() for w in model.discriminator.encoder.weights]
    sources = [
        tmp_path / "run",
        tmp_path / "serving" / "electra" / "1",
        tmp_path / "hub" / "encoder",
        tmp_path / "preset",
        hf["discriminator"],
    ]  # (a TF1 checkpoint records no head count: tests/serving/test_conversion.py)
    run = load_initialization(str(tmp_path / "run"))
    draws = []
    original = initializers._Skippable.__call__

    def counted(self, shape, dtype=None):
        draws.append(not initializers.skipping_draws())
        return original(self, shape, dtype=dtype)

    monkeypatch.setattr(initializers._Skippable, "__call__", counted)
    from electra_tf.models.discriminator import ElectraDiscriminator
    from electra_tf.models.generator import ElectraGenerator

    built = []
    for cls in (ElectraGenerator, ElectraDiscriminator):
        monkeypatch.setattr(cls, "__init__", _noting(cls.__init__, built, cls.__name__))
    for source in sources:
        draws.clear()
        built.clear()
        init = load_initialization(str(source), vocab_file=str(vocab))
        if source == hf["discriminator"]:  # released weights: only the encoder is built
            assert built == [], built
        assert draws and not any(draws), (source, f"{sum(draws)} of {len(draws)} drawn")
        assert len(init.weights) == len(expected), source
        for got, want in zip(init.weights, expected):
            np.testing.assert_allclose(got, want, atol=1e-6, err_msg=str(source))
        assert init.encoder_config == run.encoder_config, source
        assert (init.vocab_file, init.lower_case) == (str(vocab), run.lower_case), source
    # Released weights are read without rebuilding them; a vocabulary of another size is
    # still refused in one sentence.
    short = write_vocabulary(list(SPECIAL_TOKENS) + ["w0"], tmp_path / "short.txt")
    for source in (hf["discriminator"], ckpt):
        with pytest.raises(ConfigError, match="holds 6 tokens but the weights' vocabulary has 64"):
            load_initialization(str(source), vocab_file=str(short))
    scratch = load_initialization("scratch:tiny", vocab_file=str(vocab))
    assert scratch.weights is None and scratch.encoder_config["vocabulary_size"] == 64
    with pytest.raises(ConfigError, match="needs a vocabulary"):
        load_initialization("scratch:tiny")
    # A source's architecture at random init: its sizes, vocabulary and casing, no weights.
    shaped = load_initialization(f"scratch:{tmp_path / 'run'}")
    reference = load_initialization(str(tmp_path / "run"))
    assert shaped.weights is None and shaped.source == f"scratch:{tmp_path / 'run'}"
    assert shaped.encoder_config == reference.encoder_config
    assert shaped.encoder_config["num_layers"] == 2
    assert (shaped.vocab_file, shaped.lower_case) == (reference.vocab_file, reference.lower_case)


def _noting(init, built: list, name: str):
    def noted(self, *args, **kwargs):
        built.append(name)
        return init(self, *args, **kwargs)

    return noted


def test_an_empty_init_folder_says_what_was_looked_for(tmp_path):
    from electra_tf.config import ConfigError
    from electra_tf.tasks.initialization import load_initialization

    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds nothing --init reads") as error:
        load_initialization(str(tmp_path / "empty"))
    for looked_for in ("finetuned.json", "saved_model.pb", "metadata.json", "*.index"):
        assert looked_for in str(error.value)
