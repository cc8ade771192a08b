"""Regression: one score from the [CLS] vector (the reference's STS-B head)."""

from __future__ import annotations

import dataclasses

import numpy as np

from electra_tf.config import ConfigError
from electra_tf.tasks.kinds._text import TextKind
from electra_tf.tasks.registry import register_kind

__all__ = ["Regression"]


def _is_number(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


@register_kind
class Regression(TextKind):
    """A number per text: squared error; Spearman and Pearson correlation.

    Inferred when every label is a number and at least one has a fraction (whole numbers
    alone, such as star ratings, are classes unless `--kind regression` says otherwise).
    The SavedModel returns `score`.

    >>> Regression.claims([1, 2.5, "3"]), Regression.claims([1, 2, 3])
    (True, False)
    """

    name = "regression"
    metrics = ("spearman", "pearson")
    priority = 20
    claim_reason = "every label is a number and some are not integers"
    named_labels = False

    @classmethod
    def claims(cls, labels: list) -> bool:
        if not labels or not all(_is_number(v) for v in labels):
            return False
        return any(float(v) != int(float(v)) for v in labels)

    @classmethod
    def label_names(cls, rows: list, given=None) -> tuple[list, str]:
        bad = next((e for e in rows if not _is_number(e.label)), None)
        if bad is not None:
            raise ConfigError(f"{bad.guid}: the score {bad.label!r} is not a number.")
        return [], "scores"

    @classmethod
    def check_labels(cls, split: str, rows: list, labels: list) -> None:
        bad = next((e for e in rows if e.label is not None and not _is_number(e.label)), None)
        if bad is not None:
            raise ConfigError(f"{bad.guid} ({split}): the score {bad.label!r} is not a number.")

    @classmethod
    def prepare(cls, rows: list) -> list:
        return [
            dataclasses.replace(e, label=None if e.label is None else float(e.label)) for e in rows
        ]

    @classmethod
    def num_outputs(cls, labels) -> int:
        return 1

    @classmethod
    def loss(cls):
        import keras

        return keras.losses.MeanSquaredError()

    @classmethod
    def encode_targets(cls, labels, y) -> np.ndarray:
        return np.asarray(y, np.float32)

    @classmethod
    def metric_inputs(cls, outputs) -> np.ndarray:
        return np.asarray(outputs).reshape(-1)

    @classmethod
    def gold(cls, labels, label):
        return float(label)

    @classmethod
    def decode(cls, outputs, labels) -> list[dict]:
        return [{"score": float(value)} for value in np.asarray(outputs).reshape(-1)]

    @classmethod
    def head(cls, module, sequence, shape, padding_mask=None):
        return TextKind.head(module, sequence, shape)[:, 0]

    @classmethod
    def serving_outputs(cls, module, logits) -> dict:
        return {"score": logits}

    @classmethod
    def decode_serving(cls, outputs: dict, labels) -> list[dict]:
        return [{"score": float(s)} for s in outputs["score"]]
