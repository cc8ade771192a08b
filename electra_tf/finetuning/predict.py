"""Predictions from a fine-tuned run folder or from its SavedModel or LiteRT export, in batches.

`open_predictor(path)` gives one interface over both: a run folder (or its
`model/`) loads the Keras model (`load_finetuned`); an export folder (the
version folder, or a base folder holding numbered versions, the newest used)
loads the SavedModel and calls its `serving_default`; a LiteRT export folder (`model.tflite`)
runs the flatbuffer with tensorflow-text's LiteRT ops. `predict_rows` reads
the same file layouts as `electra-tf finetune` (the run's columns by
default) or takes texts, and yields one dict per input: the text(s), and the
label with its probabilities (multi-label: labels; regression: score;
tagging: words and tags).
"""

from __future__ import annotations

import json
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.io.durable import recover_within
from electra_tf.tasks.registry import get_kind

__all__ = ["open_predictor", "predict_rows", "read_inputs", "check_batch_size"]


class _KerasPredictor:
    def __init__(self, folder):
        from electra_tf.tasks.model_folder import load_finetuned

        self.model, self.info = load_finetuned(folder)
        self.kind = get_kind(self.info["kind"])
        self.pair = bool(self.info.get("pair"))

    def __call__(self, inputs, pairs=None) -> list[dict]:
        return self.kind.predict(self.model, inputs, pairs if self.pair else None, len(inputs))

    def cut_rows(self, inputs, pairs=None) -> int | None:
        """How many inputs are longer than the model reads (None: this kind cuts none)."""
        pairs = pairs if self.pair else None
        return self.kind.cut_inputs(self.model.preprocessor, inputs, pairs)


class _SavedModelPredictor:
    def __init__(self, folder: Path):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the text signature's ops)

        config = json.loads((folder / "assets.extra" / "electra_config.json").read_text())
        if config.get("kind") != "finetuned":
            raise ConfigError(
                f"{folder} is an encoder export, not a fine-tuned model; fine-tune it first."
            )
        self.info, self.pair = config, bool(config["pair"])
        self.kind = get_kind(config["task_kind"])
        self.labels = [str(name) for name in config["labels"] or []]
        self.signature = tf.saved_model.load(str(folder)).signatures["serving_default"]
        self.vocab_file = folder / "assets" / "vocab.txt"

    def cut_rows(self, inputs, pairs=None) -> int | None:
        """How many inputs are longer than the export reads (None: this kind cuts none)."""
        from electra_tf.tasks.text_classifier_preprocessor import (
            ElectraTextClassifierPreprocessor,
        )

        vocabulary = self.vocab_file.read_text("utf-8").splitlines()
        settings = {k: self.info[k] for k in ("lower_case", "strip_accents") if k in self.info}
        preprocessor = ElectraTextClassifierPreprocessor(
            vocabulary, sequence_length=self.info["seq_length"], **settings
        )
        return self.kind.cut_inputs(preprocessor, inputs, pairs if self.pair else None)

    def __call__(self, inputs, pairs=None) -> list[dict]:
        import tensorflow as tf

        texts = self.kind.serving_text(inputs)
        names = [spec.name for spec in self.kind.serving_inputs(self.pair)]
        arguments = {names[0]: tf.constant(texts, tf.string)}
        if self.pair:
            arguments[names[1]] = tf.constant(pairs, tf.string)
        out = {k: v.numpy() for k, v in self.signature(**arguments).items()}
        return self.kind.decode_serving(out, self.labels)


class _LiteRTPredictor(_SavedModelPredictor):
    """A LiteRT export (`model.tflite`, `electra-tf export --format litert`)."""

    def __init__(self, folder: Path, num_threads: int | None = None):
        from electra_tf.tasks.litert import open_litert

        self.run, config = open_litert(folder, num_threads=num_threads)
        self.info, self.pair = config, bool(config["pair"])
        self.kind = get_kind(config["task_kind"])
        self.labels = [str(name) for name in config["labels"] or []]
        self.vocab_file = folder / "vocab.txt"

    def __call__(self, inputs, pairs=None) -> list[dict]:
        out = self.run(self.kind.serving_text(inputs), pairs if self.pair else None)
        return self.kind.decode_serving(out, self.labels)


def _export_folder(path: Path) -> Path | None:
    if (path / "saved_model.pb").exists() or (path / "model.tflite").exists():
        return path
    versions = sorted(
        (int(child.name), child)
        for child in path.iterdir()
        if child.is_dir() and child.name.isdigit() and (child / "saved_model.pb").exists()
    ) if path.is_dir() else []  # fmt: skip
    if not versions:
        named = [c for c in path.iterdir() if c.is_dir()] if path.is_dir() else []
        nested = [found for c in named if (found := _export_folder(c)) is not None]
        return nested[0] if len(nested) == 1 else None
    return versions[-1][1]


def open_predictor(path, num_threads: int | None = None):
    """A callable `(inputs, pairs=None) -> [dict]` over a run folder or a SavedModel or LiteRT
    export; its `kind` (the registered kind), `pair` and `info` say what it reads.
    `num_threads`: the LiteRT interpreter's (default: its own choice)."""
    path = Path(path)
    recover_within(path, depth=2)  # a model or version folder whose publishing was killed
    if not path.exists():
        raise ConfigError(f"{path} does not exist; give a fine-tuned run folder or its export.")
    export = _export_folder(path)
    if export is not None and (export / "model.tflite").exists():
        return _LiteRTPredictor(export, num_threads)
    if export is not None:
        return _SavedModelPredictor(export)
    return _KerasPredictor(path)


def read_inputs(path, info: dict, format: str | None = None, columns: dict | None = None):
    """(inputs, pairs or None) of a file, read by the model's kind with the run's columns
    (or `columns`' names): texts, or word lists for tagging (CoNLL files, or a table's text
    split on whitespace)."""
    given = {k: v for k, v in (columns or {}).items() if v}
    columns = {**(info.get("columns") or {}), **given}
    kind = get_kind(info["task_kind"] if info.get("kind") == "finetuned" else info["kind"])
    return kind.read_inputs(path, columns, format)


def check_batch_size(batch_size) -> int:
    """`batch_size` if it is a whole number of at least 1, else one sentence (ConfigError).

    >>> check_batch_size(8)
    8
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(
            f"--batch-size must be a whole number of at least 1 (got {batch_size!r}): the "
            "examples given to the model in one call."
        )
    return batch_size


def predict_rows(predictor, texts, pairs=None, batch_size: int = 32, progress: bool = True):
    """One output row per input (with its text), predicted in batches with a progress bar
    (a generator; a bad `batch_size` or missing pairs are refused at the call)."""
    check_batch_size(batch_size)
    if getattr(predictor, "pair", False) and pairs is None:
        raise ConfigError("This model reads text pairs: give a file with both text columns.")
    return _predicted_rows(predictor, texts, pairs, batch_size, progress)


def _predicted_rows(predictor, texts, pairs, batch_size: int, progress: bool):
    from tqdm import tqdm

    bar = tqdm(total=len(texts), unit=" examples", disable=not progress, smoothing=0.1)
    for start in range(0, len(texts), batch_size):
        chunk = list(texts[start : start + batch_size])
        pair_chunk = None if pairs is None else list(pairs[start : start + batch_size])
        for i, row in enumerate(predictor(chunk, pair_chunk)):
            pair = None if pair_chunk is None else pair_chunk[i]
            yield {**predictor.kind.shown_inputs(chunk[i], pair), **row}
        bar.update(len(chunk))
    bar.close()
