"""Where a fine-tuning encoder comes from: a checkpoint, an export, released weights, or scratch.

`load_initialization(spec)` accepts:

- a pre-training run or `step-N` checkpoint folder of this package;
- a SavedModel exported by this package (`export --format serving` version folder,
  or the `encoder/` of a TF-Hub-style export); its config is stored with it;
- a keras-hub `ElectraBackbone` preset folder;
- a Hugging Face ELECTRA or BERT folder (`model.safetensors` or `pytorch_model.bin`,
  config.json), with its vocab.txt and casing;
- a reference TF1 checkpoint (`model.ckpt-N`);
- a fine-tuned run of `electra-tf finetune` (or its `model/` folder): its encoder, for a
  second fine-tuning (MNLI then RTE, say);
- `scratch:RECIPE` (e.g. `scratch:tiny`): random weights of a recipe's discriminator
  (with the vocabulary given by `vocab_file`), the no-pre-training baseline;
  `scratch:SOURCE`, any source above: random weights in SOURCE's architecture, with its
  vocabulary and casing (the baseline for a released or adapted encoder).

It returns the encoder's config and weights as plain arrays, so each seed
of a multi-seed run starts from a fresh, identical copy. `load_warm_start(spec)`
reads the same sources for continued pre-training (`electra-tf pretrain --init`),
keeping the replaced-token head and a trained generator where the source has them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from electra_tf.config import ConfigError, load_recipe
from electra_tf.data.vocabulary import read_vocabulary, special_ids
from electra_tf.io.durable import recover_within
from electra_tf.layers.initializers import draws_skipped
from electra_tf.models.encoder import ElectraEncoder

__all__ = [
    "Initialization",
    "load_initialization",
    "load_warm_start",
    "vocabulary_of",
    "CONFIG_ASSET",
    "FINETUNED_MARKER",
    "FINETUNED_MODEL",
    "source_kind",
]

CONFIG_ASSET = "electra_config.json"  # written into exports' assets.extra/
FINETUNED_MARKER = "finetuned.json"  # what a fine-tuned model folder (RUN/model/) is
FINETUNED_MODEL = "model.keras"  # the fine-tuned Keras model in that folder


@dataclasses.dataclass
class Initialization:
    """An encoder's sizes and weights, and the vocabulary that goes with them."""

    source: str
    encoder_config: dict
    weights: list | None  # None: random initialization
    vocab_file: str
    lower_case: bool = True

    @classmethod
    def from_encoder(cls, source, encoder, vocab_file, lower_case: bool = True):
        """The initialization holding a copy of `encoder`'s sizes and weights."""
        config = encoder.get_config()
        config.pop("name", None)
        weights = [np.asarray(w.numpy()) for w in encoder.weights]
        return cls(str(source), config, weights, str(vocab_file), lower_case)

    @property
    def special_ids(self) -> dict[str, int]:
        return special_ids(read_vocabulary(self.vocab_file))

    def build_encoder(self, dropout: float | None = None) -> ElectraEncoder:
        config = dict(self.encoder_config)
        if dropout is not None:
            config["dropout"] = dropout
        config.pop("name", None)
        with draws_skipped(self.weights is not None):  # each weight assigned below
            encoder = ElectraEncoder(name="encoder", **config)
            encoder.build()
        if self.weights is not None:
            for variable, value in zip(encoder.weights, self.weights, strict=True):
                variable.assign(value)
        return encoder


def _need_vocab(vocab_file, source):
    if not vocab_file or not Path(vocab_file).exists():
        raise ConfigError(
            f"Initialization {source} needs a vocabulary: pass --vocab-file (vocab.txt)."
        )
    return vocab_file


def _is_checkpoint(path: Path) -> bool:
    return path.is_dir() and ((path / "state.json").exists() or (path / "checkpoints").exists())


def _is_hugging_face(path: Path) -> bool:
    return path.is_dir() and (
        (path / "model.safetensors").exists() or (path / "pytorch_model.bin").exists()
    )


def source_kind(spec: str) -> str:
    """What `spec` names: "scratch", "finetuned", "checkpoint", "saved_model", "keras_hub",
    "hugging_face" or "reference" (the one place that tells the sources apart).

    Raises:
        ConfigError: `spec` does not exist or is none of these.
    """
    if spec.startswith("scratch:"):
        return "scratch"
    path = Path(spec)
    recover_within(path)  # a fine-tuned model folder whose publishing was killed midway
    if not path.exists() and not Path(f"{spec}.index").exists():
        raise ConfigError(f"Initialization {spec} does not exist.")
    if path.is_dir() and (path / FINETUNED_MARKER).exists():
        return "finetuned"
    if path.is_dir() and (path / "model" / FINETUNED_MARKER).exists():
        return "finetuned"
    if _is_checkpoint(path):
        return "checkpoint"
    if path.is_dir() and (path / "saved_model.pb").exists():
        return "saved_model"
    if path.is_dir() and (path / "config.json").exists() and (path / "metadata.json").exists():
        return "keras_hub"
    if _is_hugging_face(path):
        return "hugging_face"
    if path.is_dir() and not any(path.glob("*.index")) and not (path / "checkpoint").exists():
        raise ConfigError(
            f"{spec} holds nothing --init reads: it looked for a fine-tuned run "
            f"(model/{FINETUNED_MARKER}), a pre-training run or checkpoint, a SavedModel "
            "(saved_model.pb), a keras-hub preset (config.json and metadata.json), a Hugging "
            "Face folder (config.json and its weights) and a TF1 checkpoint (checkpoint or "
            "*.index files); give the folder that holds one of them."
        )
    if str(path).endswith(".index") or Path(f"{spec}.index").exists() or path.is_dir():
        return "reference"
    raise ConfigError(
        f"{spec} is not a checkpoint, export, preset or weights folder this package can read."
    )


def _imported(spec: str, kind: str, vocab_file=None, encoder_only: bool = False):
    """(the `ElectraPretrainer` of released weights, its checked vocabulary, its casing or
    None): a Hugging Face folder or a reference TF1 checkpoint. `encoder_only`: the caller
    keeps only the discriminator's encoder (each of its weights is read; the rest is left
    at zeros, not drawn)."""
    from electra_tf.serving.conversion import (
        hugging_face_vocabulary,
        import_hugging_face,
        import_reference_checkpoint,
        vocabulary_for,
    )

    with draws_skipped(encoder_only):
        if kind == "hugging_face":
            model = import_hugging_face(Path(spec))
        else:
            model = import_reference_checkpoint(str(spec).removesuffix(".index"))
    if kind == "hugging_face":
        found, lower = hugging_face_vocabulary(Path(spec))
        vocab = _need_vocab(vocab_file or found, spec)
    else:
        vocab, lower = _need_vocab(vocab_file, spec), None
    vocabulary_for(model, vocab)
    return model, vocab, lower


def _pretrainer_of(spec: str, kind: str, vocab_file=None):
    """The `ElectraPretrainer` of a source that holds one, its config recording a vocabulary."""
    from electra_tf.serving.conversion import with_vocabulary

    if kind == "checkpoint":
        from electra_tf.pretraining.checkpoint import load_pretrainer

        model = load_pretrainer(spec)
        return with_vocabulary(model, vocab_file) if vocab_file else model
    model, vocab, lower = _imported(spec, kind, vocab_file)
    return with_vocabulary(model, vocab, lower)


def load_warm_start(spec: str, vocab_file: str | None = None):
    """A `WarmStart` for continued pre-training from any source `load_initialization` reads.

    - a run or checkpoint of this package: the discriminator (encoder and head) and, unless
      it was imported without one, its generator;
    - a Hugging Face ELECTRA folder: the discriminator with its head (no generator);
    - a Hugging Face BERT folder, an export, a preset, a fine-tuned run or a TF1
      checkpoint: the encoder.
    """
    from electra_tf.pretraining.warm_start import WarmStart

    kind = source_kind(spec)
    if kind in ("checkpoint", "hugging_face"):
        model = _pretrainer_of(spec, kind, vocab_file)
        if kind == "checkpoint":
            from electra_tf.pretraining.checkpoint import find_checkpoint

            state = json.loads((find_checkpoint(spec) / "state.json").read_text())
            imported = state.get("import_report") or {}
            head = imported.get("discriminator_head", True)
            generator = imported.get("generator", True)
        else:
            head, generator = model.import_report["discriminator_head"], False
        return WarmStart.from_pretrainer(spec, model, with_head=head, with_generator=generator)
    init = load_initialization(spec, vocab_file)
    if init.weights is None:
        raise ConfigError(f"{spec} holds no weights to continue from.")
    return WarmStart(
        source=spec,
        encoder_config=dict(init.encoder_config),
        encoder_weights=list(init.weights),
        vocab_file=init.vocab_file,
        lower_case=init.lower_case,
    )


def vocabulary_of(spec) -> tuple[str, bool | None]:
    """(vocab.txt, lower_case) of a vocabulary file or of a source that records one.

    A plain vocab.txt gives no casing (None); a run, checkpoint, Hugging Face folder or
    export gives the casing it was trained with; a folder `prepare` wrote gives its
    vocab.txt and the casing its manifest records.
    """
    path = Path(spec)
    if path.is_file():
        return str(path), None
    prepared = _prepared_vocabulary(path)
    if prepared:
        return prepared
    try:
        kind = source_kind(str(spec))
    except ConfigError:
        if not path.is_dir():
            raise
        raise ConfigError(
            f"{spec} holds no vocabulary: give a vocab.txt, or a folder that records one "
            "(prepared data, a run, a checkpoint, an export or a Hugging Face folder)."
        ) from None
    if kind == "checkpoint":
        from electra_tf.pretraining.checkpoint import read_checkpoint_config

        data = read_checkpoint_config(path).data
        return _need_vocab(data.vocab_file, spec), data.lower_case
    if kind == "hugging_face" or (path / "vocab.txt").exists():
        from electra_tf.serving.conversion import hugging_face_vocabulary

        found, lower = hugging_face_vocabulary(path)
        return _need_vocab(found, spec), lower
    init = load_initialization(str(spec))
    return init.vocab_file, init.lower_case


def _prepared_vocabulary(path: Path):
    """(vocab.txt, lower_case) of a data folder `prepare` wrote, or None for anything else."""
    from electra_tf.data.tfrecords import MANIFEST, Manifest

    if not (path / MANIFEST).is_file():
        return None
    manifest = Manifest.read(path)  # one sentence if it cannot be read
    vocab = Path(manifest.folder) / (manifest.vocab_file or "vocab.txt")
    return (str(vocab), manifest.extra.get("lower_case")) if vocab.is_file() else None


def load_initialization(spec: str, vocab_file: str | None = None) -> Initialization:
    """Reads an initialization source (see the module docstring)."""
    kind = source_kind(spec)
    if kind == "scratch":
        recipe = spec.split(":", 1)[1]
        if Path(recipe).exists() and Path(recipe).suffix != ".toml":
            shape = load_initialization(recipe, vocab_file)
            return dataclasses.replace(shape, source=spec, weights=None)
        config = load_recipe(recipe)
        vocab = _need_vocab(vocab_file, spec)
        encoder_config = config.model.discriminator().to_dict()
        encoder_config["vocabulary_size"] = len(read_vocabulary(vocab))
        return Initialization(spec, encoder_config, None, str(vocab))
    path = Path(spec)
    if kind == "finetuned":
        return _from_finetuned(path if (path / FINETUNED_MARKER).exists() else path / "model")
    if kind == "saved_model":
        return _from_saved_model(path, vocab_file)
    if kind == "keras_hub":
        from electra_tf.serving.keras_hub_preset import read_keras_hub_preset

        encoder = read_keras_hub_preset(path)
        vocab = vocab_file or next(iter(path.glob("assets/tokenizer/vocabulary.txt")), None)
        return Initialization.from_encoder(spec, encoder, _need_vocab(vocab, spec))
    if kind == "hugging_face":  # the imported encoder, not rebuilt
        return _hugging_face_encoder(spec, vocab_file)
    if kind == "reference":  # the imported encoder, not rebuilt
        model, vocab, lower = _imported(spec, kind, vocab_file, encoder_only=True)
        lower = model.config.data.lower_case if lower is None else lower
        return Initialization.from_encoder(spec, model.discriminator.encoder, vocab, lower)
    model = _pretrainer_of(spec, kind, vocab_file)
    data = model.config.data
    return Initialization.from_encoder(
        spec, model.discriminator.encoder, _need_vocab(data.vocab_file, spec), data.lower_case
    )


def _hugging_face_encoder(spec: str, vocab_file) -> Initialization:
    """A Hugging Face folder's encoder, its vocabulary checked, its casing recorded or
    taken from the config. Only the encoder is built (no generator, no heads)."""
    from electra_tf.serving.conversion import hugging_face_vocabulary, vocabulary_for
    from electra_tf.serving.hugging_face import import_hugging_face_encoder

    encoder, config = import_hugging_face_encoder(Path(spec))
    found, lower = hugging_face_vocabulary(Path(spec))
    vocab = _need_vocab(vocab_file or found, spec)
    vocabulary_for(SimpleNamespace(config=config), vocab)
    lower = config.data.lower_case if lower is None else lower
    return Initialization.from_encoder(spec, encoder, vocab, lower)


def _from_finetuned(folder: Path) -> Initialization:
    """The encoder of a fine-tuned model folder (`RUN/model/`), for further fine-tuning."""
    import keras

    from electra_tf.io.durable import verify_record
    from electra_tf.tasks.registry import load_kinds

    load_kinds()  # every kind's Keras classes, registered for `load_model`

    reason = verify_record(folder, required=(FINETUNED_MODEL,))
    if reason:
        raise ConfigError(f"The fine-tuned model {folder} is not usable ({reason}).")
    model = keras.saving.load_model(folder / FINETUNED_MODEL, compile=False)
    return Initialization.from_encoder(
        str(folder), model.encoder, str(folder / "vocab.txt"), model.preprocessor.lower_case
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
    with draws_skipped():  # every weight is read below, or the load raises
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
    return Initialization.from_encoder(
        str(path), encoder, _need_vocab(vocab, path), saved.get("lower_case", True)
    )
