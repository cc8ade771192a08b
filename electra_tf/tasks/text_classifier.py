"""`ElectraTextClassifier`: a fine-tunable classifier that fits and predicts on raw strings."""

from __future__ import annotations

import keras
import numpy as np

from electra_tf.tasks.base import TaskModel, encoder_and_preprocessor
from electra_tf.tasks.classifier import ElectraClassifier
from electra_tf.tasks.registry import get_kind
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

__all__ = ["ElectraTextClassifier", "split_texts"]


def split_texts(x):
    """(text_a, text_b or None) of `x`: a batch of texts, or a `(text_a, text_b)` tuple."""
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError("Give pair inputs as a tuple (text_a, text_b) of two batches.")
        return list(x[0]), list(x[1])
    if isinstance(x, str):
        raise ValueError("Give a batch of texts (a list of strings), not a single string.")
    return list(x), None


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifier(TaskModel, ElectraClassifier):
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
        spec = get_kind(kind)
        if not hasattr(spec, "decode"):
            raise ValueError(f"kind {kind!r} is not a kind on the [CLS] vector.")
        if spec.named_labels and not labels:
            raise ValueError(f"A {kind} model needs its label names (labels=[...]).")
        labels = [str(label) for label in labels] if spec.named_labels else None
        num_outputs = spec.num_outputs(labels)
        super().__init__(encoder, num_outputs, dropout=dropout, name=name, **kwargs)
        self.labels = labels
        self.kind = kind
        self.spec = spec
        self.preprocessor = preprocessor

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
        from electra_tf.tasks.initialization import load_initialization

        if labels is None and num_classes:
            labels = [str(i) for i in range(num_classes)]
        encoder, preprocessor = encoder_and_preprocessor(
            load_initialization(str(source), vocab_file), ElectraTextClassifierPreprocessor,
            dropout=dropout, sequence_length=sequence_length, pad_to=pad_to,
        )  # fmt: skip
        model = cls(encoder, labels=labels, kind=kind, preprocessor=preprocessor, dropout=dropout)
        model.build()
        return model

    def default_loss(self):
        """The kind's loss: cross-entropy over labels, a sigmoid cross-entropy per label, or
        squared error."""
        return self.spec.loss()

    def default_metrics(self) -> list:
        """The kind's Keras metrics (accuracy; a thresholded one for multi-label)."""
        return self.spec.keras_metrics()

    def encode_labels(self, y) -> np.ndarray:
        """Targets for the loss: class ids, multi-hot rows or float scores.

        `y` holds label names (lists of names for multi-label), or class ids; a number
        equal to a label name is that name (the label "3" for 3), so labels such as star
        ratings or `["1", "0"]` read as the names they are.
        """
        return self.spec.encode_targets(self.labels, y)

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
        group_by_length: bool | None = None,
        **kwargs,
    ):
        """`keras.Model.fit` on raw strings (or a dataset of them, or id inputs).

        Args:
            x: texts (a list or array), a `(text_a, text_b)` tuple of them, a
                `tf.data.Dataset` of `(texts, labels)` batches (labels as names, ids,
                names padded with "" for multi-label, or scores), or id inputs.
            y: labels (names, ids, lists of names for multi-label, or scores).
            batch_size, epochs, verbose, callbacks, initial_epoch: as Keras's.
            validation_data: `(texts, labels)` or a dataset as `x`, evaluated after each
                epoch.
            seed: the batch order's seed (epoch e's order depends only on seed and e,
                so a run resumed with `initial_epoch=e` sees the same batches); by
                default drawn from NumPy's global generator.
            group_by_length: batch texts of similar length together; None: as
                `compile`'s `defaults` recipe (no for "standard", yes for "paper").
        """
        import tensorflow as tf

        validation_data = self._validation(validation_data, batch_size)
        if isinstance(x, tf.data.Dataset):
            return self.fit_dataset(self.dataset_of_targets(x), epochs=epochs, verbose=verbose,
                                    callbacks=callbacks, validation_data=validation_data,
                                    initial_epoch=initial_epoch, **kwargs)  # fmt: skip
        packed = x if isinstance(x, dict) else self._packed(x)
        return self.fit_packed(
            packed, self.encode_labels(y), batch_size=batch_size, epochs=epochs,
            initial_epoch=initial_epoch, seed=seed, group_by_length=group_by_length,
            validation_data=validation_data, verbose=verbose, callbacks=callbacks, **kwargs,
        )  # fmt: skip

    def _validation(self, validation_data, batch_size: int):
        """`fit`'s validation data as Keras takes it: `(texts, labels)` packed and encoded
        (in batches, for a `tf.data.Dataset` to fit), a dataset of them mapped."""
        import tensorflow as tf

        if validation_data is None:
            return None
        if isinstance(validation_data, tf.data.Dataset):
            return self.dataset_of_targets(validation_data)
        texts, labels = validation_data
        packed = texts if isinstance(texts, dict) else self._packed(texts)
        return packed, self.encode_labels(labels)

    def dataset_of_targets(self, dataset):
        """A `tf.data.Dataset` of `(inputs, targets[, sample_weight])` batches as the model
        reads them: raw texts (or pairs) packed by the preprocessor, and targets given as
        strings (label names; lists of names for multi-label) turned into what
        `encode_labels` makes of them, so the loss and the compiled metrics see the same
        targets. Other datasets are returned as they are."""
        import tensorflow as tf

        spec = dataset.element_spec
        if not isinstance(spec, tuple) or len(spec) not in (2, 3):
            return dataset
        texts = self.preprocessor is not None and _string_inputs(spec[0])
        names = getattr(spec[1], "dtype", None) == tf.string
        if not texts and not names:
            return dataset

        def prepare(x, y, sample_weight=None):
            x = self.preprocessor(x) if texts else x
            y = self.spec.graph_targets(self.labels, y) if names else y
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)

        return dataset.map(prepare, num_parallel_calls=tf.data.AUTOTUNE)

    def evaluate(self, x=None, y=None, batch_size: int = 32, verbose="auto", **kwargs):
        """`keras.Model.evaluate` on what `fit` takes: texts (or `(text_a, text_b)`) and their
        labels, a `tf.data.Dataset` of `(texts, labels)` batches, or id inputs; compiled with
        the defaults first if need be."""
        if kwargs.get("_use_cached_eval_dataset"):  # `fit`'s validation: batches it made
            return keras.Model.evaluate(self, x, y, batch_size=batch_size, verbose=verbose,
                                        **kwargs)  # fmt: skip
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset):
            return self.evaluate_dataset(self.dataset_of_targets(x), verbose=verbose, **kwargs)
        packed = x if isinstance(x, dict) else self._packed(x)
        return self.evaluate_packed(packed, self.encode_labels(y), batch_size=batch_size,
                                    verbose=verbose, **kwargs)  # fmt: skip

    def predict(self, x, batch_size: int = 32, verbose=0, **kwargs):
        """Logits (or scores) of raw strings, id inputs, or a `tf.data.Dataset` of batches of
        texts, of `(text_a, text_b)` pairs or of `(texts, targets)` with targets that are
        not strings (ignored, as Keras does; two batches of strings are read as a pair);
        rows in input order."""
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset):
            spec = x.element_spec
            if _string_inputs(spec):
                x = x.map(self.preprocessor)
            elif isinstance(spec, tuple) and len(spec) in (2, 3) and _string_inputs(spec[0]):
                x = x.map(lambda texts, *targets: self.preprocessor(texts))
            return super().predict(x, verbose=verbose, **kwargs)
        packed = x if isinstance(x, dict) else self._packed(x)
        return self.predict_packed(packed, batch_size)

    def decode(self, outputs) -> list[dict]:
        """Per row: `label` and `probabilities` (name -> p); multi-label: `labels` (p >= 0.5)
        and `probabilities`; regression: `score`."""
        return self.spec.decode(outputs, self.labels)

    def predict_labels(self, x, batch_size: int = 32) -> list[dict]:
        """Label names and probabilities (or scores) of raw strings (see `decode`)."""
        return self.decode(self.predict(x, batch_size=batch_size))

    def get_config(self):
        config = super().get_config()
        config.pop("num_outputs")
        return {**config, **self.parts_config(), "labels": self.labels, "kind": self.kind}


def _string_inputs(spec) -> bool:
    """Whether a dataset element (or its inputs part) is raw text (or a pair of texts)."""
    import tensorflow as tf

    parts = spec if isinstance(spec, tuple) else (spec,)
    return all(isinstance(p, tf.TensorSpec) and p.dtype == tf.string for p in parts)
