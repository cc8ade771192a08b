"""Multi-label classification: a sigmoid per label name on the [CLS] vector."""

from __future__ import annotations

import numpy as np

from electra_tf.tasks.base import name_hits
from electra_tf.tasks.kinds._text import TextKind, class_id
from electra_tf.tasks.registry import register_kind

__all__ = ["MultiLabel"]


@register_kind
class MultiLabel(TextKind):
    """Any number of labels per text: a sigmoid cross-entropy per label; micro and macro F1
    and exact match at probability 0.5.

    The SavedModel returns `labels` (the chosen names first, in label order, then ""),
    `probabilities` and `logits`.

    >>> MultiLabel.encode_targets(["a", "b", "c"], [["c"], ["a", "b"]]).tolist()
    [[0.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    """

    name = "multi_label"
    metrics = ("micro_f1", "macro_f1", "exact_match")
    priority = 10
    claim_reason = "labels are lists"

    @classmethod
    def claims(cls, labels: list) -> bool:
        return any(isinstance(v, list | tuple) for v in labels)

    @classmethod
    def loss(cls):
        import keras

        return keras.losses.BinaryCrossentropy(from_logits=True)

    @classmethod
    def keras_metrics(cls) -> list:
        import keras

        return [keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)]

    @classmethod
    def encode_targets(cls, labels, y) -> np.ndarray:
        """Multi-hot rows of lists of names (or ids), or multi-hot rows as they are."""
        rows = np.zeros((len(y), len(labels)), np.float32)
        for row, values in enumerate(y):
            array = np.asarray(values)
            if array.ndim == 1 and len(array) == len(labels) and array.dtype.kind in "fb":
                rows[row] = array  # already multi-hot
            else:
                rows[row, [class_id(labels, value) for value in values]] = 1.0
        return rows

    @classmethod
    def graph_targets(cls, labels, y):
        """Multi-hot rows of a batch of name lists (ragged, or padded with ""), in the graph."""
        import tensorflow as tf

        if isinstance(y, tf.RaggedTensor):
            y = y.to_tensor("")
        if y.shape.rank == 1:  # one name a row
            y = tf.expand_dims(y, -1)
        hits = name_hits(y, labels, padding=True)  # [B, names, labels]
        return tf.cast(tf.reduce_any(hits, axis=1), tf.float32)

    @classmethod
    def metric_inputs(cls, outputs) -> np.ndarray:
        return (np.asarray(outputs) >= 0.0).astype(np.float32)

    @classmethod
    def collapsed(cls, split: str, targets, predicted, labels) -> str | None:
        """Every row predicting the same label set while the targets hold at least two.

        >>> MultiLabel.collapsed("dev", np.eye(2), np.zeros((2, 2)), ["a", "b"])
        'every dev prediction is the label set {} while only 0% of dev rows have it'
        """
        chosen = np.unique(predicted, axis=0)
        if len(chosen) != 1 or len(np.unique(targets, axis=0)) < 2:
            return None
        names = ", ".join(labels[i] for i in np.flatnonzero(chosen[0]))
        share = float(np.mean(np.all(targets == chosen[0], axis=1)))
        return (
            f"every {split} prediction is the label set {{{names}}} while only {share:.0%} of "
            f"{split} rows have it"
        )

    @classmethod
    def gold(cls, labels, label):
        return [str(v) if isinstance(v, str) else labels[int(v)] for v in label]

    @classmethod
    def decode(cls, outputs, labels) -> list[dict]:
        """Per row: `labels` (probability at least 0.5) and `probabilities` (name -> p)."""
        probabilities = 1.0 / (1.0 + np.exp(-np.asarray(outputs, np.float64)))
        return [
            {
                "labels": [n for n, p in zip(labels, row, strict=True) if p >= 0.5],
                "probabilities": dict(zip(labels, map(float, row), strict=True)),
            }
            for row in probabilities
        ]

    @classmethod
    def serving_outputs(cls, module, logits) -> dict:
        import tensorflow as tf

        probabilities = tf.sigmoid(logits)
        chosen = probabilities >= 0.5
        # Chosen names first, in label order, then "": sort keys j (chosen) and count + j (not),
        # distinct, so top_k orders them; index `count` reads the "" after the names. (No
        # string broadcast or argsort: LiteRT runs this too.)
        count = tf.shape(logits)[1]
        j = tf.range(count)[None, :]
        keys = -tf.math.top_k(-tf.where(chosen, j, j + count), k=count).values
        names = tf.gather(tf.concat([module.labels, [""]], 0), tf.minimum(keys, count))
        return {"labels": names, "probabilities": probabilities, "logits": logits}

    @classmethod
    def decode_serving(cls, outputs: dict, labels) -> list[dict]:
        return [
            {
                "labels": [n.decode() for n in names if n],
                "probabilities": dict(zip(labels, map(float, p), strict=True)),
            }
            for names, p in zip(outputs["labels"], outputs["probabilities"], strict=True)
        ]
