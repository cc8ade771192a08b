"""`ElectraTextClassifier`: a fine-tunable classifier that fits and predicts on raw strings."""

from __future__ import annotations

import keras
import numpy as np

from electra_tf.data.batching import ordered_batches, pad_batch, row_lengths
from electra_tf.data.vocabulary import read_vocabulary
from electra_tf.finetuning.text_task import INPUT_NAMES, TextTask
from electra_tf.models.finetuning import ElectraClassifier
from electra_tf.models.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

__all__ = [
    "ElectraTextClassifier",
    "TEXT_KINDS",
    "INPUT_NAMES",
    "split_texts",
    "predict_batches",
]

TEXT_KINDS = ("classification", "multi_label", "regression")


def split_texts(x):
    """(text_a, text_b or None) of `x`: a batch of texts, or a `(text_a, text_b)` tuple."""
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError("Give pair inputs as a tuple (text_a, text_b) of two batches.")
        return list(x[0]), list(x[1])
    if isinstance(x, str):
        raise ValueError("Give a batch of texts (a list of strings), not a single string.")
    return list(x), None


def predict_batches(model, features: dict, batch_size: int) -> np.ndarray:
    """The model's outputs over length-sorted batches, back in row order."""
    lengths = row_lengths(features["padding_mask"])
    forward = model.inference_function()
    outputs, order = [], []
    for index in ordered_batches(lengths, batch_size):
        batch = pad_batch({k: features[k] for k in INPUT_NAMES}, index, lengths)
        outputs.append(np.asarray(forward({k: v.astype(np.int32) for k, v in batch.items()})))
        order.append(index)
    if not outputs:
        return np.zeros((0,))
    result = np.empty((len(lengths), *outputs[0].shape[1:]), outputs[0].dtype)
    result[np.concatenate(order)] = np.concatenate(outputs)
    return result


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifier(TextTask, ElectraClassifier):
    """ELECTRA's encoder with the [CLS] head, fitting and predicting on raw strings.

    In the style of keras-hub's `BertTextClassifier`: a preprocessor turns strings into
    the encoder's inputs, so `fit`, `predict` and `evaluate` take text, and the whole
    model (weights, label names, vocabulary, casing, maximum length) saves to one
    `.keras` file. `fit` on strings packs the texts once and pads each batch to its
    own longest row, with rows of similar length batched together
    (`electra_tf.data.batching`); a `tf.data.Dataset` of `(strings, labels)` batches
    is preprocessed batch by batch instead.

    Args:
        encoder: an `ElectraEncoder`.
        labels: the label names, in class-id order (None for regression).
        kind: "classification" (softmax over labels), "multi_label" (a sigmoid per
            label) or "regression" (one score).
        preprocessor: an `ElectraTextClassifierPreprocessor`, or None for id inputs only.
        dropout: dropout before the output layer.
        **kwargs: passed to `keras.Model`.

    Example:

    >>> from electra_tf.models.encoder import ElectraEncoder
    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film"]
    >>> encoder = ElectraEncoder(vocabulary_size=8, num_layers=1, hidden_dim=8,
    ...     embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=16)
    >>> classifier = ElectraTextClassifier(encoder, labels=["neg", "pos"],
    ...     preprocessor=ElectraTextClassifierPreprocessor(tokens, sequence_length=16))
    >>> classifier.predict(["good film", "bad film"]).shape
    (2, 2)
    >>> sorted(classifier.predict_labels(["good film"])[0])
    ['label', 'probabilities']
    """

    def __init__(
        self,
        encoder,
        labels=None,
        kind: str = "classification",
        preprocessor=None,
        dropout: float = 0.1,
        name="electra_text_classifier",
        **kwargs,
    ):
        if kind not in TEXT_KINDS:
            raise ValueError(f"kind must be one of {TEXT_KINDS}, got {kind!r}.")
        if kind != "regression" and not labels:
            raise ValueError(f"A {kind} model needs its label names (labels=[...]).")
        num_outputs = 1 if kind == "regression" else len(labels)
        super().__init__(encoder, num_outputs, dropout=dropout, name=name, **kwargs)
        self.labels = None if kind == "regression" else [str(label) for label in labels]
        self.kind = kind
        self.preprocessor = preprocessor
        self._auto_optimizer = False

    @classmethod
    def from_source(
        cls,
        source: str,
        labels=None,
        num_classes: int | None = None,
        kind: str = "classification",
        sequence_length: int = 128,
        dropout: float = 0.1,
        vocab_file=None,
        pad_to: str = "longest",
    ) -> ElectraTextClassifier:
        """A new classifier on the encoder of SOURCE (anything `--init` accepts).

        Args:
            source: a run or checkpoint, an export, a keras-hub preset, a Hugging Face or
                reference checkpoint, a fine-tuned run, or `scratch:...`.
            labels: label names; or `num_classes` for names "0", "1", ...
            kind, dropout: see the class.
            sequence_length: the longest input (at most the encoder's positions).
            vocab_file: the vocabulary, when the source has none.
            pad_to: the preprocessor's padding ("longest" or "max").
        """
        from electra_tf.finetuning.initialization import load_initialization

        if labels is None and num_classes:
            labels = [str(i) for i in range(num_classes)]
        init = load_initialization(str(source), vocab_file)
        encoder = init.build_encoder(dropout=dropout)
        preprocessor = ElectraTextClassifierPreprocessor(
            read_vocabulary(init.vocab_file),
            lower_case=init.lower_case,
            sequence_length=min(int(sequence_length), encoder.max_sequence_length),
            pad_to=pad_to,
        )
        model = cls(encoder, labels=labels, kind=kind, preprocessor=preprocessor, dropout=dropout)
        model.build()
        return model

    def default_loss(self):
        """Cross-entropy over labels, a sigmoid cross-entropy per label, or squared error."""
        if self.kind == "classification":
            return keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        if self.kind == "multi_label":
            return keras.losses.BinaryCrossentropy(from_logits=True)
        return keras.losses.MeanSquaredError()

    def default_metrics(self) -> list:
        """Accuracy (a thresholded one for multi-label); none for regression."""
        if self.kind == "classification":
            return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
        if self.kind == "multi_label":
            return [keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)]
        return []

    def encode_labels(self, y) -> np.ndarray:
        """Targets for the loss: class ids, multi-hot rows or float scores.

        `y` may hold label names (or lists of names for multi-label) or ids already.
        """
        if self.kind == "regression":
            return np.asarray(y, np.float32)
        index = {name: i for i, name in enumerate(self.labels)}

        def class_id(value):
            if isinstance(value, str):
                if value not in index:
                    raise ValueError(f"Label {value!r} is not one of {self.labels}.")
                return index[value]
            if not 0 <= int(value) < len(self.labels):
                raise ValueError(f"Label id {value} is outside 0..{len(self.labels) - 1}.")
            return int(value)

        if self.kind == "classification":
            return np.asarray([class_id(value) for value in y], np.int32)
        rows = np.zeros((len(y), len(self.labels)), np.float32)
        for row, values in enumerate(y):
            array = np.asarray(values)
            if array.ndim == 1 and len(array) == len(self.labels) and array.dtype.kind in "fb":
                rows[row] = array  # already multi-hot
            else:
                rows[row, [class_id(value) for value in values]] = 1.0
        return rows

    def _packed(self, x) -> dict:
        if self.preprocessor is None:
            raise ValueError("This classifier has no preprocessor; give it id inputs.")
        return self.preprocessor.pack_all(*split_texts(x))

    def fit(
        self,
        x=None,
        y=None,
        batch_size: int = 32,
        epochs: int = 1,
        verbose="auto",
        callbacks=None,
        validation_data=None,
        initial_epoch: int = 0,
        seed: int | None = None,
        group_by_length: bool = True,
        **kwargs,
    ):
        """`keras.Model.fit` on raw strings (or a dataset of them, or id inputs).

        Args:
            x: texts (a list or array), a `(text_a, text_b)` tuple of them, a
                `tf.data.Dataset` of `(texts, labels)` batches, or id inputs.
            y: labels (names, ids, lists of names for multi-label, or scores).
            batch_size, epochs, verbose, callbacks, initial_epoch: as Keras's.
            validation_data: `(texts, labels)`, evaluated after each epoch.
            seed: the batch order's seed (epoch e's order depends only on seed and e,
                so a run resumed with `initial_epoch=e` sees the same batches); by
                default drawn from NumPy's global generator.
            group_by_length: batch texts of similar length together.
        """
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset | dict):
            if not self.compiled:
                self.compile()
            if isinstance(x, dict):
                y = self.encode_labels(y)
                self.auto_compile(len(x["token_ids"]), batch_size, epochs)
            elif self.preprocessor is not None and x.element_spec[0].dtype == tf.string:
                x = x.map(self.preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
            if isinstance(x, tf.data.Dataset):
                kwargs.setdefault("shuffle", False)  # shuffled (or not) by its maker
            size = None if isinstance(x, tf.data.Dataset) else batch_size
            return super().fit(x, y, batch_size=size, epochs=epochs, verbose=verbose,
                               callbacks=callbacks, validation_data=validation_data,
                               initial_epoch=initial_epoch, **kwargs)  # fmt: skip
        if validation_data is not None:
            texts, labels = validation_data
            validation_data = (self._packed(texts), self.encode_labels(labels))
        return self.fit_packed(
            self._packed(x), self.encode_labels(y), batch_size=batch_size, epochs=epochs,
            initial_epoch=initial_epoch, seed=seed, group_by_length=group_by_length,
            validation_data=validation_data, verbose=verbose, callbacks=callbacks, **kwargs,
        )  # fmt: skip

    def predict(self, x, batch_size: int = 32, verbose=0, **kwargs):
        """Logits (or scores) of raw strings, a dataset or id inputs; rows in input order."""
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset | dict):
            strings = isinstance(x, tf.data.Dataset) and x.element_spec == tf.TensorSpec(
                [None], tf.string
            )
            x = x.map(self.preprocessor) if strings else x
            return super().predict(x, batch_size=batch_size, verbose=verbose, **kwargs)
        return predict_batches(self, self._packed(x), batch_size)

    def decode(self, outputs) -> list[dict]:
        """Per row: `label` and `probabilities` (name -> p); multi-label: `labels` (p >= 0.5)
        and `probabilities`; regression: `score`."""
        outputs = np.asarray(outputs, np.float64)
        if self.kind == "regression":
            return [{"score": float(value)} for value in outputs.reshape(-1)]
        if self.kind == "multi_label":
            probabilities = 1.0 / (1.0 + np.exp(-outputs))
            return [
                {
                    "labels": [n for n, p in zip(self.labels, row, strict=True) if p >= 0.5],
                    "probabilities": dict(zip(self.labels, map(float, row), strict=True)),
                }
                for row in probabilities
            ]
        shifted = np.exp(outputs - outputs.max(axis=-1, keepdims=True))
        probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
        return [
            {
                "label": self.labels[int(np.argmax(row))],
                "probabilities": dict(zip(self.labels, map(float, row), strict=True)),
            }
            for row in probabilities
        ]

    def predict_labels(self, x, batch_size: int = 32) -> list[dict]:
        """Label names and probabilities (or scores) of raw strings (see `decode`)."""
        return self.decode(self.predict(x, batch_size=batch_size))

    def get_config(self):
        config = super().get_config()
        config.pop("num_outputs")
        return {**config, **self.parts_config(), "labels": self.labels, "kind": self.kind}
