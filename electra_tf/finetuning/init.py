"""Where a fine-tuning encoder comes from: a checkpoint, an export, released weights, or scratch.

`load_initialization(spec)` accepts:

- a pre-training run or `step-N` checkpoint folder of this package;
- a SavedModel exported by this package (`export --format serving` version folder,
  or the `encoder/` of a TF-Hub-style export); its config is stored with it;
- a keras-hub `ElectraBackbone` preset folder;
- a Hugging Face ELECTRA folder (`model.safetensors` or `pytorch_model.bin`, config.json);
- a reference TF1 checkpoint (`model.ckpt-N`);
- `scratch:RECIPE` (e.g. `scratch:tiny`): random weights of a recipe's discriminator
  (with the vocabulary given by `vocab_file`), the no-pre-training baseline.

It returns the encoder's config and weights as plain arrays, so each seed
of a multi-seed run starts from a fresh, identical copy.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError, load_recipe
from electra_tf.data.vocabulary import read_vocabulary, special_ids
from electra_tf.models.encoder import ElectraEncoder

__all__ = ["Initialization", "load_initialization", "CONFIG_ASSET"]

CONFIG_ASSET = "electra_config.json"  # written into exports' assets.extra/


@dataclasses.dataclass
class Initialization:
    """An encoder's sizes and weights, and the vocabulary that goes with them."""

    source: str
    encoder_config: dict
    weights: list | None  # None: random initialization
    vocab_file: str
    lower_case: bool = True

    @property
    def special_ids(self) -> dict[str, int]:
        return special_ids(read_vocabulary(self.vocab_file))

    def build_encoder(self, dropout: float | None = None) -> ElectraEncoder:
        config = dict(self.encoder_config)
        if dropout is not None:
            config["dropout"] = dropout
        config.pop("name", None)
        encoder = ElectraEncoder(name="encoder", **config)
        encoder.build()
        if self.weights is not None:
            for variable, value in zip(encoder.weights, self.weights, strict=True):
                variable.assign(value)
        return encoder


def _from_encoder(source, encoder, vocab_file, lower_case=True) -> Initialization:
    config = encoder.get_config()
    config.pop("name", None)
    return Initialization(
        source,
        config,
        [np.asarray(w.numpy()) for w in encoder.weights],
        str(vocab_file),
        lower_case,
    )


def _need_vocab(vocab_file, source):
    if not vocab_file or not Path(vocab_file).exists():
        raise ConfigError(
            f"Initialization {source} needs a vocabulary: pass --vocab-file (vocab.txt)."
        )
    return vocab_file


def load_initialization(spec: str, vocab_file: str | None = None) -> Initialization:
    """Reads an initialization source (see the module docstring)."""
    if spec.startswith("scratch:"):
        config = load_recipe(spec.split(":", 1)[1])
        vocab = _need_vocab(vocab_file, spec)
        encoder_config = config.model.discriminator().to_dict()
        encoder_config["vocabulary_size"] = len(read_vocabulary(vocab))
        return Initialization(spec, encoder_config, None, str(vocab))
    path = Path(spec)
    if not path.exists():
        raise ConfigError(f"Initialization {spec} does not exist.")
    if path.is_dir() and ((path / "state.json").exists() or (path / "checkpoints").exists()):
        from electra_tf.pretraining.checkpoint import load_pretrainer

        model = load_pretrainer(path)
        vocab = vocab_file or model.config.data.vocab_file
        return _from_encoder(spec, model.discriminator.encoder, _need_vocab(vocab, spec))
    if path.is_dir() and (path / "saved_model.pb").exists():
        return _from_saved_model(path, vocab_file)
    if path.is_dir() and (path / "config.json").exists() and (path / "metadata.json").exists():
        from electra_tf.serving.keras_hub_preset import read_keras_hub_preset

        encoder = read_keras_hub_preset(path)
        vocab = vocab_file or next(iter(path.glob("assets/tokenizer/vocabulary.txt")), None)
        return _from_encoder(spec, encoder, _need_vocab(vocab, spec))
    if path.is_dir() and (
        (path / "model.safetensors").exists() or (path / "pytorch_model.bin").exists()
    ):
        from electra_tf.serving.importers import import_hugging_face

        model = import_hugging_face(path)
        vocab = vocab_file or (path / "vocab.txt")
        lower = True
        if (path / "tokenizer_config.json").exists():
            lower = bool(
                json.loads((path / "tokenizer_config.json").read_text()).get("do_lower_case", True)
            )
        return _from_encoder(spec, model.discriminator.encoder, _need_vocab(vocab, spec), lower)
    if str(path).endswith(".index") or Path(f"{spec}.index").exists() or path.is_dir():
        from electra_tf.serving.importers import import_reference_checkpoint

        model = import_reference_checkpoint(str(spec).removesuffix(".index"))
        return _from_encoder(spec, model.discriminator.encoder, _need_vocab(vocab_file, spec))
    raise ConfigError(
        f"{spec} is not a checkpoint, export, preset or weights folder this package can read."
    )


def _from_saved_model(path: Path, vocab_file):
    import tensorflow as tf

    config_file = path / "assets.extra" / CONFIG_ASSET
    if not config_file.exists():
        raise ConfigError(
            f"{path} has no assets.extra/{CONFIG_ASSET}; only SavedModels exported by electra-tf "
            "can initialize fine-tuning (use a checkpoint or released weights otherwise)."
        )
    saved = json.loads(config_file.read_text())
    encoder = ElectraEncoder(name="encoder", **saved["encoder"])
    encoder.build()
    reader = tf.train.load_checkpoint(str(path / "variables" / "variables"))
    for i, weight in enumerate(encoder.weights):
        key = f"encoder_weights/{i}/.ATTRIBUTES/VARIABLE_VALUE"
        if not reader.has_tensor(key):
            raise ConfigError(
                f"{path} lacks the encoder weight {key}; re-export it with electra-tf."
            )
        weight.assign(reader.get_tensor(key))
    # A serving export carries its vocabulary; a TF-Hub encoder's is in its preprocessor.
    vocab = vocab_file or next(
        (
            p
            for p in (
                path / "assets" / "vocab.txt",
                path.parent / "preprocessor" / "assets" / "vocab.txt",
            )
            if p.exists()
        ),
        None,
    )
    return _from_encoder(
        str(path), encoder, _need_vocab(vocab, path), saved.get("lower_case", True)
    )
