"""Predictions from a fine-tuned run folder or from its SavedModel export, in batches.

`open_predictor(path)` gives one interface over both: a run folder (or its
`model/`) loads the Keras model (`load_finetuned`); an export folder (the
version folder, or a base folder holding numbered versions, the newest used)
loads the SavedModel and calls its `serving_default`. `predict_rows` reads
the same file layouts as `electra-tf finetune` (the run's columns by
default) or takes texts, and yields one dict per input: the text(s), and the
label with its probabilities (multi-label: labels; regression: score;
tagging: words and tags).
"""

from __future__ import annotations

import json
from pathlib import Path

from electra_tf.config import ConfigError

__all__ = ["open_predictor", "predict_rows", "read_inputs"]


class _KerasPredictor:
    def __init__(self, folder):
        from electra_tf.finetuning.model_folder import load_finetuned

        self.model, self.info = load_finetuned(folder)
        self.kind = self.info["kind"]
        self.pair = bool(self.info.get("pair"))

    def __call__(self, texts, pairs=None) -> list[dict]:
        if self.kind == "tagging":
            return self.model.predict_labels(texts, batch_size=len(texts))
        x = (texts, pairs) if self.pair else texts
        return self.model.predict_labels(x, batch_size=len(texts))


class _SavedModelPredictor:
    def __init__(self, folder: Path):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the text signature's ops)

        config = json.loads((folder / "assets.extra" / "electra_config.json").read_text())
        if config.get("kind") != "finetuned":
            raise ConfigError(
                f"{folder} is an encoder export, not a fine-tuned model; fine-tune it first."
            )
        self.info, self.kind, self.pair = config, config["task_kind"], bool(config["pair"])
        self.labels = [str(name) for name in config["labels"] or []]
        self.signature = tf.saved_model.load(str(folder)).signatures["serving_default"]

    def __call__(self, texts, pairs=None) -> list[dict]:
        import tensorflow as tf

        inputs = {"text": tf.constant(texts)}
        if self.pair:
            inputs["text_pair"] = tf.constant(pairs)
        out = {k: v.numpy() for k, v in self.signature(**inputs).items()}
        if self.kind == "regression":
            return [{"score": float(s)} for s in out["score"]]
        if self.kind == "tagging":
            rows = []
            for words, tags in zip(out["words"], out["tags"], strict=True):
                count = sum(1 for w in words if w)
                rows.append(
                    {
                        "words": [w.decode() for w in words[:count]],
                        "tags": [t.decode() for t in tags[:count]],
                    }
                )
            return rows
        probabilities = [
            dict(zip(self.labels, map(float, row), strict=True)) for row in out["probabilities"]
        ]
        if self.kind == "multi_label":
            return [
                {"labels": [n.decode() for n in names if n], "probabilities": p}
                for names, p in zip(out["labels"], probabilities, strict=True)
            ]
        return [
            {"label": label.decode(), "probabilities": p}
            for label, p in zip(out["label"], probabilities, strict=True)
        ]


def _export_folder(path: Path) -> Path | None:
    if (path / "saved_model.pb").exists():
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


def open_predictor(path):
    """A callable `(texts, pairs=None) -> [dict]` over a run folder or a SavedModel export."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path} does not exist; give a fine-tuned run folder or its export.")
    export = _export_folder(path)
    if export is not None:
        return _SavedModelPredictor(export)
    return _KerasPredictor(path)


def read_inputs(path, info: dict, format: str | None = None, columns: dict | None = None):
    """(texts, pairs or None) of a file, read with the run's columns (or `columns`' names)."""
    from electra_tf.finetuning.files import Columns, read_table, table_format

    given = {k: v for k, v in (columns or {}).items() if v}
    columns = {**(info.get("columns") or {}), **given}
    kind = table_format(path, format or columns.get("format"))
    if info.get("kind") == "tagging" or kind == "conll":
        from electra_tf.finetuning.tagging import read_conll

        if kind == "conll":
            sentences, _ = read_conll(path, needs_labels=False)
            return [list(s.words) for s in sentences], None
    spec = Columns(**{**{k: v for k, v in columns.items() if v is not None}, "format": kind})
    examples, _ = read_table(path, spec, needs_labels=False)
    texts = [e.text_a for e in examples]
    pairs = [e.text_b for e in examples] if spec.text_pair else None
    return texts, pairs


def predict_rows(predictor, texts, pairs=None, batch_size: int = 32, progress: bool = True):
    """Yields one output row per input (with its text), in batches, with a progress bar."""
    from tqdm import tqdm

    if getattr(predictor, "pair", False) and pairs is None:
        raise ConfigError("This model reads text pairs: give a file with both text columns.")
    bar = tqdm(total=len(texts), unit=" examples", disable=not progress, smoothing=0.1)
    for start in range(0, len(texts), batch_size):
        chunk = list(texts[start : start + batch_size])
        pair_chunk = None if pairs is None else list(pairs[start : start + batch_size])
        for i, row in enumerate(predictor(chunk, pair_chunk)):
            text = chunk[i]
            shown = {"text": " ".join(text) if isinstance(text, list) else text}
            if pair_chunk is not None:
                shown["text_pair"] = pair_chunk[i]
            yield {**shown, **row}
        bar.update(len(chunk))
    bar.close()
