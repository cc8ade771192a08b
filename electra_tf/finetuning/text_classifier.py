"""`ElectraTextClassifier`: a fine-tunable classifier that fits and predicts on raw strings."""

from __future__ import annotations

import math

import keras
import numpy as np

from electra_tf.data.batching import batch_dataset, ordered_batches, pad_batch, row_lengths
from electra_tf.data.vocabulary import read_vocabulary
from electra_tf.finetuning.config import FinetuneConfig
from electra_tf.finetuning.optimizer import finetuning_optimizer
from electra_tf.models.finetuning import ElectraClassifier
from electra_tf.models.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

__all__ = [
    "ElectraTextClassifier",
    "TEXT_KINDS",
    "INPUT_NAMES",
    "split_texts",
    "predict_batches",
    "inference_function",
]

TEXT_KINDS = ("classification", "multi_label", "regression")
INPUT_NAMES = ("token_ids", "padding_mask", "segment_ids")


def split_texts(x):
    """(text_a, text_b or None) of `x`: a batch of texts, or a `(text_a, text_b)` tuple."""
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError("Give pair inputs as a tuple (text_a, text_b) of two batches.")
        return list(x[0]), list(x[1])
    if isinstance(x, str):
        raise ValueError("Give a batch of texts (a list of strings), not a single string.")
    return list(x), None


def inference_function(model):
    """`model(inputs, training=False)` as one `tf.function` for every `[batch, length]`."""
    function = getattr(model, "_inference_function", None)
    if function is None:
        import tensorflow as tf

        spec = {name: tf.TensorSpec([None, None], tf.int32) for name in INPUT_NAMES}
        function = tf.function(lambda inputs: model(inputs, training=False), input_signature=[spec])
        object.__setattr__(model, "_inference_function", function)  # not Keras state
    return function


def predict_batches(model, features: dict, batch_size: int) -> np.ndarray:
    """The model's outputs over length-sorted batches, back in row order."""
    lengths = row_lengths(features["padding_mask"])
    forward = inference_function(model)
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
class ElectraTextClassifier(ElectraClassifier):
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

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """`keras.Model.compile` with defaults for the kind.

        `optimizer="auto"` is the paper's fine-tuning optimizer (layer-wise AdamW, 10%
        warmup then linear decay, the learning rate for the encoder's size), made by
        `fit` once it knows the number of steps.
        """
        self._auto_optimizer = isinstance(optimizer, str) and optimizer == "auto"
        if self._auto_optimizer:
            optimizer = keras.optimizers.Adam()  # replaced by `fit`
        if loss == "auto":
            loss = self.default_loss()
        if metrics == "auto":
            metrics = {
                "classification": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
                "multi_label": [keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)],
                "regression": [],
            }[self.kind]
        # Kept for `fit`'s "auto" optimizer; set past Keras's tracking, as `compile` does
        # (a tracked list of metrics would count as new state of a built model).
        object.__setattr__(self, "_compile_arguments", dict(loss=loss, metrics=metrics, **kwargs))
        super().compile(optimizer=optimizer, **self._compile_arguments)

    def get_compile_config(self):
        # Not saved: a loaded classifier compiles afresh (`compile()`), as keras-hub's tasks.
        return None

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

    def _auto_compile(self, rows: int, batch_size: int, epochs: int) -> None:
        """Compiles with the defaults if need be; makes the "auto" optimizer for this fit."""
        if not self.compiled:
            self.compile()
        if not self._auto_optimizer or int(self.optimizer.iterations.numpy()) > 0:
            return
        if not self.built:  # the layer-wise rates are set per variable
            self.build()
        steps = math.ceil(rows / batch_size) * epochs
        config = FinetuneConfig().resolved(self.encoder.hidden_dim, epochs)
        optimizer = finetuning_optimizer(self, config, steps)
        super().compile(optimizer=optimizer, **self._compile_arguments)
        self._auto_optimizer = False

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

        if isinstance(x, tf.data.Dataset):
            if not self.compiled:
                self.compile()
            if self.preprocessor is not None and x.element_spec[0].dtype == tf.string:
                x = x.map(self.preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
            kwargs.setdefault("shuffle", False)  # a dataset is shuffled (or not) by its maker
            return super().fit(
                x,
                epochs=epochs,
                verbose=verbose,
                callbacks=callbacks,
                validation_data=validation_data,
                initial_epoch=initial_epoch,
                **kwargs,
            )
        if isinstance(x, dict):
            self._auto_compile(len(next(iter(x.values()))), batch_size, epochs)
            return super().fit(
                x,
                self.encode_labels(y),
                batch_size=batch_size,
                epochs=epochs,
                verbose=verbose,
                callbacks=callbacks,
                initial_epoch=initial_epoch,
                validation_data=validation_data,
                **kwargs,
            )
        features = self._packed(x)
        rows = len(features["token_ids"])
        if rows == 0:
            raise ValueError("fit was given no texts.")
        self._auto_compile(rows, batch_size, epochs)
        seed = int(np.random.randint(2**31 - 1)) if seed is None else int(seed)
        dataset = batch_dataset(
            features,
            self.encode_labels(y),
            batch_size=batch_size,
            seed=seed,
            epochs=range(initial_epoch, epochs),
            group=50 if group_by_length else 0,
        )
        if validation_data is not None:
            texts, labels = validation_data
            packed = self._packed(texts)
            validation_data = batch_dataset(
                packed, self.encode_labels(labels), batch_size=batch_size, group=0
            )
        return super().fit(
            dataset,
            epochs=epochs,
            steps_per_epoch=math.ceil(rows / batch_size),
            verbose=verbose,
            callbacks=callbacks,
            validation_data=validation_data,
            initial_epoch=initial_epoch,
            shuffle=False,  # the dataset is shuffled, by seed and epoch
            **kwargs,
        )

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
        config.update(
            labels=self.labels,
            kind=self.kind,
            preprocessor=None
            if self.preprocessor is None
            else keras.saving.serialize_keras_object(self.preprocessor),
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        if config.get("preprocessor") is not None:
            config["preprocessor"] = keras.saving.deserialize_keras_object(config["preprocessor"])
        return cls(**config)
