"""`TextKind`: what the kinds on the [CLS] vector share (classification, multi-label, regression).

Each of them is an `ElectraTextClassifier` on raw text (or text pairs); they
differ in the loss, the targets, the metrics' inputs, how outputs decode and
what the SavedModel returns, which each kind's own module defines.
"""

from __future__ import annotations

import numpy as np

import electra_tf.metrics as metric_functions
from electra_tf.tasks.base import encoder_and_preprocessor as task_parts
from electra_tf.tasks.kind import Kind
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

__all__ = ["TextKind", "METRICS", "encoder_and_preprocessor"]

METRICS = {
    "accuracy": metric_functions.accuracy,
    "f1": metric_functions.f1_binary,
    "mcc": metric_functions.matthews_corrcoef,
    "spearman": metric_functions.spearman,
    "pearson": metric_functions.pearson,
    "macro_f1": metric_functions.macro_f1,
    "micro_f1": metric_functions.micro_f1,
    "exact_match": metric_functions.exact_match,
}


def encoder_and_preprocessor(init, config, preprocessor_class):
    """`init`'s encoder and a `preprocessor_class` at the run's dropout, length and padding."""
    return task_parts(
        init, preprocessor_class, dropout=config.dropout,
        sequence_length=config.max_seq_length, pad_to=config.pad_to,
    )  # fmt: skip


class TextKind(Kind):
    """The [CLS]-head kinds' shared job (see the module docstring)."""

    litert = True
    first_position_head = True

    def __init__(self, task, splits: dict):
        super().__init__(task, splits)
        self._targets = {}
        self.eval_batch_size = 128

    def build(self, init, config) -> ElectraTextClassifier:
        self.eval_batch_size = config.eval_batch_size
        encoder, preprocessor = encoder_and_preprocessor(
            init, config, ElectraTextClassifierPreprocessor
        )
        model = ElectraTextClassifier(
            encoder,
            labels=list(self.task.labels) or None,
            kind=self.name,
            preprocessor=preprocessor,
            dropout=config.dropout,
        )
        model.build()
        return model

    def texts(self, split: str):
        rows = self.examples[split]
        if self.task.pair:
            return ([e.text_a for e in rows], [e.text_b for e in rows])
        return [e.text_a for e in rows]

    def cut_rows(self, model, split: str) -> int:
        texts = self.texts(split)
        a, b = texts if self.task.pair else (texts, None)
        return self.cut_inputs(model.preprocessor, a, b)

    @classmethod
    def cut_inputs(cls, preprocessor, texts, pairs=None) -> int | None:
        return preprocessor.truncated(texts, pairs)

    def fit(self, model, config, seed: int, initial_epoch: int, callbacks) -> None:
        labels = [e.label for e in self.examples["train"]]
        self.fit_rows(model, self.texts("train"), labels, config, seed, initial_epoch, callbacks)

    def outputs(self, model, split: str):
        return self.remembered(
            model, split, lambda: model.predict(self.texts(split), batch_size=self.eval_batch_size)
        )

    def score(self, model, split: str) -> dict:
        if split not in self._targets:
            labels = [e.label for e in self.examples[split]]
            self._targets[split] = self.encode_targets(model.labels, labels)
        predicted = self.metric_inputs(self.outputs(model, split))
        targets = self._targets[split]
        self.note_collapse(split, self.collapsed(split, targets, predicted, model.labels))
        return {name: METRICS[name](targets, predicted) for name in self.task.metrics}

    def predictions(self, model, split: str) -> list[dict]:
        """One JSON row per example: the text(s), the prediction, and the gold label if any."""
        rows = []
        decoded = self.decode(self.outputs(model, split), model.labels)
        for example, prediction in zip(self.examples[split], decoded, strict=True):
            row = {"text": example.text_a}
            if example.text_b is not None:
                row["text_pair"] = example.text_b
            row.update(prediction)
            if example.label is not None:
                row["gold"] = self.gold(model.labels, example.label)
            rows.append(row)
        return rows

    # -- per kind --------------------------------------------------------------------------

    @classmethod
    def loss(cls):
        raise NotImplementedError

    @classmethod
    def keras_metrics(cls) -> list:
        return []

    @classmethod
    def encode_targets(cls, labels, y) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def graph_targets(cls, labels, y):
        """`encode_targets` in the graph, for a `tf.data.Dataset`'s string targets (scores
        written as text, here; names in the kinds with names)."""
        import tensorflow as tf

        return tf.strings.to_number(y, tf.float32)

    @classmethod
    def metric_inputs(cls, outputs) -> np.ndarray:
        """What the metrics compare with the targets: class ids, 0/1 rows or scores."""
        raise NotImplementedError

    @classmethod
    def collapsed(cls, split: str, targets, predicted, labels) -> str | None:
        """The phrase of `Kind.collapse` from the metrics' targets and inputs (None here:
        regression does not tell)."""
        return None

    @classmethod
    def decode(cls, outputs, labels) -> list[dict]:
        raise NotImplementedError

    @classmethod
    def gold(cls, labels, label):
        return str(label) if isinstance(label, str) else labels[int(label)]

    @classmethod
    def num_outputs(cls, labels) -> int:
        return len(labels)

    @classmethod
    def predict(cls, model, texts, pairs=None, batch_size: int = 32) -> list[dict]:
        x = (texts, pairs) if pairs is not None else texts
        return model.predict_labels(x, batch_size=batch_size)

    @classmethod
    def head(cls, module, sequence, shape, padding_mask=None):
        """The head's logits from the encoder's first positions `[B, H]`, in the exports."""
        import tensorflow as tf

        return tf.nn.bias_add(tf.matmul(sequence, module.head_kernel), module.head_bias)

    @classmethod
    def serve(cls, module, text, text_pair=None) -> dict:
        """`serving_default`'s outputs for a batch of texts (in the graph)."""
        return cls.serving_outputs(module, module.logits(*module.packed(text, text_pair)))

    @classmethod
    def serving_outputs(cls, module, logits) -> dict:
        raise NotImplementedError


def class_id(labels, value) -> int:
    """The class id of `value`: a label name (also when given as a number equal to a name,
    such as 3 for the label "3"), or else an integer class id."""
    names = {name: i for i, name in enumerate(labels)}
    if str(value) in names and not isinstance(value, bool):
        if isinstance(value, str) or float(value) == int(float(value)):
            return names[str(value)]
    if isinstance(value, str):
        raise ValueError(f"Label {value!r} is not one of {list(labels)}.")
    if not 0 <= int(value) < len(labels):
        raise ValueError(f"Label id {value} is outside 0..{len(labels) - 1}.")
    return int(value)
