"""Single-label classification: a softmax over the label names on the [CLS] vector."""

from __future__ import annotations

import numpy as np

from electra_tf.tasks.base import name_hits
from electra_tf.tasks.kinds._text import TextKind, class_id
from electra_tf.tasks.registry import register_kind

__all__ = ["Classification"]


@register_kind
class Classification(TextKind):
    """One label per text (or pair): cross-entropy, accuracy and macro F1.

    The kept epoch is the one of best dev macro F1 (your files; a named task keeps its
    own first metric): on imbalanced labels an epoch predicting only the majority class
    ties on accuracy with a later one that finds the rare class, and the tie kept it.

    The SavedModel returns `label` (the name), `label_id`, `probabilities` and `logits`.

    >>> Classification.encode_targets(["1", "0"], [0, 1, "1"]).tolist()
    [1, 0, 0]
    >>> Classification.decode(np.array([[0.0, 2.0]]), ["neg", "pos"])[0]["label"]
    'pos'
    """

    name = "classification"
    metrics = ("accuracy", "macro_f1")
    selection_metric = "macro_f1"
    priority = 30  # anything that no other kind claims
    claim_reason = "labels are names"

    @classmethod
    def claims(cls, labels: list) -> bool:
        return True

    @classmethod
    def loss(cls):
        import keras

        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @classmethod
    def keras_metrics(cls) -> list:
        import keras

        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    @classmethod
    def encode_targets(cls, labels, y) -> np.ndarray:
        """Class ids of label names (or of ids; a number equal to a name is that name)."""
        return np.asarray([class_id(labels, value) for value in y], np.int32)

    @classmethod
    def graph_targets(cls, labels, y):
        """Class ids of a batch of label names `[B]`, in the graph."""
        import tensorflow as tf

        hits = name_hits(tf.reshape(y, [-1]), labels)
        return tf.argmax(tf.cast(hits, tf.int32), axis=-1, output_type=tf.int32)

    @classmethod
    def metric_inputs(cls, outputs) -> np.ndarray:
        return np.argmax(np.asarray(outputs), axis=-1)

    @classmethod
    def collapsed(cls, split: str, targets, predicted, labels) -> str | None:
        """Every prediction the same label while the targets hold at least two.

        >>> Classification.collapsed("dev", np.array([0, 1, 0]), np.array([0, 0, 0]), ["a", "b"])
        "every dev prediction is 'a' while only 67% of dev rows are 'a'"
        """
        chosen = np.unique(predicted)
        if len(chosen) != 1 or len(np.unique(targets)) < 2:
            return None
        name, share = labels[int(chosen[0])], float(np.mean(targets == chosen[0]))
        return (
            f"every {split} prediction is {name!r} while only {share:.0%} of {split} rows "
            f"are {name!r}"
        )

    @classmethod
    def decode(cls, outputs, labels) -> list[dict]:
        """Per row: `label` and `probabilities` (name -> p)."""
        outputs = np.asarray(outputs, np.float64)
        shifted = np.exp(outputs - outputs.max(axis=-1, keepdims=True))
        probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
        return [
            {
                "label": labels[int(np.argmax(row))],
                "probabilities": dict(zip(labels, map(float, row), strict=True)),
            }
            for row in probabilities
        ]

    @classmethod
    def serving_outputs(cls, module, logits) -> dict:
        import tensorflow as tf

        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "label": tf.gather(module.labels, label_id),
            "label_id": label_id,
            "probabilities": tf.nn.softmax(logits),
            "logits": logits,
        }

    @classmethod
    def decode_serving(cls, outputs: dict, labels) -> list[dict]:
        return [
            {
                "label": label.decode(),
                "probabilities": dict(zip(labels, map(float, p), strict=True)),
            }
            for label, p in zip(outputs["label"], outputs["probabilities"], strict=True)
        ]
