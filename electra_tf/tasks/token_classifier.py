"""`ElectraTokenClassifier`: per-word tags (BIO named entities, chunks) on raw text."""

from __future__ import annotations

import keras
import numpy as np

from electra_tf.tasks.base import INPUT_NAMES, TaskModel, encoder_and_preprocessor, name_hits
from electra_tf.tasks.token_classifier_preprocessor import (
    IGNORED,
    ElectraTokenClassifierPreprocessor,
)

__all__ = ["ElectraTokenClassifier"]


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenClassifier(TaskModel, keras.Model):
    """ELECTRA's encoder with a tag layer on every token, fitting and predicting on words.

    Each word's tag is read from its first WordPiece (`ElectraTokenClassifierPreprocessor`);
    the loss skips the other positions.

    Args:
        encoder: an `ElectraEncoder`.
        labels: the tag names, in id order.
        preprocessor: an `ElectraTokenClassifierPreprocessor`, or None for id inputs only.
        dropout: dropout before the tag layer.

    Call arguments:
        inputs: dict of `token_ids`, `padding_mask`, `segment_ids` `[B, S]`.

    Returns:
        `[B, S, len(labels)]` logits.

    Example:

    >>> from electra_tf.models.encoder import ElectraEncoder
    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ada", "lives", "in", "rome"]
    >>> encoder = ElectraEncoder(vocabulary_size=9, num_layers=1, hidden_dim=8,
    ...     embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=16)
    >>> tagger = ElectraTokenClassifier(encoder, ["O", "B-PER", "B-LOC"],
    ...     ElectraTokenClassifierPreprocessor(tokens, sequence_length=16))
    >>> [len(row["tags"]) for row in tagger.predict_labels(["Ada lives in Rome", "Rome"])]
    [4, 1]
    """

    def __init__(
        self,
        encoder,
        labels,
        preprocessor=None,
        dropout: float = 0.1,
        name="electra_token_classifier",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        self.encoder = encoder
        self.labels = [str(label) for label in labels]
        self.kind = "tagging"
        self.preprocessor = preprocessor
        self.dropout_rate = dropout
        self.dropout = keras.layers.Dropout(dropout, name="task_specific_dropout")
        self.output_dense = keras.layers.Dense(
            len(self.labels),
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=encoder.initializer_range),
            name="task_specific_output",
        )

    def build(self, input_shape=None):
        if not self.encoder.built:
            self.encoder.build()
        self.output_dense.build((None, None, self.encoder.hidden_dim))
        self.built = True

    def call(self, inputs, training=None):
        sequence = self.encoder({k: inputs[k] for k in INPUT_NAMES}, training=training)
        return self.output_dense(self.dropout(sequence, training=training))

    @classmethod
    def from_source(
        cls, source: str, labels, sequence_length: int = 128, dropout: float = 0.1,
        vocab_file=None, pad_to: str = "longest",
    ) -> ElectraTokenClassifier:  # fmt: skip
        """A new tagger on the encoder of SOURCE (anything `--init` accepts)."""
        from electra_tf.tasks.initialization import load_initialization

        encoder, preprocessor = encoder_and_preprocessor(
            load_initialization(str(source), vocab_file), ElectraTokenClassifierPreprocessor,
            dropout=dropout, sequence_length=sequence_length, pad_to=pad_to,
        )  # fmt: skip
        model = cls(encoder, labels, preprocessor, dropout)
        model.build()
        return model

    def default_loss(self):
        """Cross-entropy over tags at each word's first piece (other positions ignored)."""
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=IGNORED)

    def encode_tags(self, tags) -> list[list[int]]:
        """Tag ids of tag names (or ids), per sentence."""
        index = {name: i for i, name in enumerate(self.labels)}
        try:
            return [[index[t] if isinstance(t, str) else int(t) for t in row] for row in tags]
        except KeyError as error:
            raise ValueError(f"Tag {error.args[0]!r} is not one of {self.labels}.") from None

    def fit(self, x=None, y=None, batch_size: int = 32, epochs: int = 1, seed: int | None = None,
            group_by_length: bool | None = None, **kwargs):  # fmt: skip
        """`keras.Model.fit` on sentences (word lists or whitespace-split texts) and their tags
        (names or ids, one per word), batched as `ElectraTextClassifier.fit`; or on a
        `tf.data.Dataset` of `(sentences, tags)` batches (texts or ragged word lists, ragged
        tag names or ids) or of `(inputs, per-token tag ids)` batches."""
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset):
            return self.fit_dataset(self.dataset_of_targets(x), epochs=epochs, **kwargs)
        packed = self.preprocessor.pack_all(x, tags=self.encode_tags(y))
        return self.fit_packed(
            packed, packed.pop("labels"), batch_size=batch_size, epochs=epochs, seed=seed,
            group_by_length=group_by_length, per_token_targets=True, **kwargs,
        )  # fmt: skip

    def evaluate(self, x=None, y=None, batch_size: int = 32, verbose="auto", **kwargs):
        """`keras.Model.evaluate` on what `fit` takes (compiled with the defaults first if
        need be)."""
        if kwargs.get("_use_cached_eval_dataset"):  # `fit`'s validation: batches it made
            return keras.Model.evaluate(self, x, y, batch_size=batch_size, verbose=verbose,
                                        **kwargs)  # fmt: skip
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset):
            return self.evaluate_dataset(self.dataset_of_targets(x), verbose=verbose, **kwargs)
        packed = self.preprocessor.pack_all(x, tags=self.encode_tags(y))
        return self.evaluate_packed(
            packed, packed.pop("labels"), batch_size=batch_size, per_token_targets=True,
            verbose=verbose, **kwargs,
        )  # fmt: skip

    def dataset_of_targets(self, dataset):
        """A `tf.data.Dataset` of `(sentences, tags)` batches as the model reads them: packed
        inputs and each word's tag id at its first piece (tag names mapped to ids in the
        graph, so the loss and the compiled metrics see the same targets). A dataset of
        packed inputs is returned as it is."""
        import tensorflow as tf

        spec = dataset.element_spec
        if not isinstance(spec, tuple) or len(spec) != 2 or isinstance(spec[0], dict):
            return dataset
        if getattr(spec[0], "dtype", None) != tf.string:
            return dataset
        labels = self.labels

        def prepare(x, tags):
            if not isinstance(tags, tf.RaggedTensor):
                tags = tf.RaggedTensor.from_tensor(tags, padding="" if tags.dtype == tf.string
                                                   else -1)  # fmt: skip
            if tags.dtype == tf.string:
                tags = tf.ragged.map_flat_values(
                    lambda names: tf.argmax(tf.cast(name_hits(names, labels), tf.int32), -1,
                                            output_type=tf.int32), tags,
                )  # fmt: skip
            return self.preprocessor(x, y=tf.cast(tags, tf.int32))

        return dataset.map(prepare, num_parallel_calls=tf.data.AUTOTUNE)

    def word_logits(self, x, batch_size: int = 32) -> tuple[np.ndarray, np.ndarray]:
        """(`[N, W]` word mask, `[N, W, tags]` logits at each word's first piece) of sentences."""
        packed = self.preprocessor.pack_all(x)
        outputs = self.predict_packed(packed, batch_size)  # [N, S', tags]
        positions = np.minimum(packed["word_positions"], outputs.shape[1] - 1)
        logits = np.take_along_axis(outputs, positions[..., None], axis=1)
        return packed["word_mask"], logits

    def predict_labels(self, x, batch_size: int = 32) -> list[dict]:
        """Per sentence: its `words`, their `tags` and each tag's probability, and
        `words_cut`: how many words lay past the maximum length (tag "", probability 0)."""
        from electra_tf.tasks.token_classifier_preprocessor import as_words

        words = [[w.decode() for w in row] for row in as_words(list(x)).to_list()]
        mask, logits = self.word_logits(x, batch_size)
        shifted = np.exp(logits - logits.max(-1, keepdims=True))
        probabilities = shifted / shifted.sum(-1, keepdims=True)
        rows = []
        for i, sentence in enumerate(words):
            best = probabilities[i, : len(sentence)].argmax(-1)
            kept = mask[i, : len(sentence)].astype(bool)
            rows.append(
                {
                    "words": sentence,
                    "tags": [self.labels[t] if k else "" for t, k in zip(best, kept, strict=True)],
                    "probabilities": [
                        float(probabilities[i, j, t]) if k else 0.0
                        for j, (t, k) in enumerate(zip(best, kept, strict=True))
                    ],
                    "words_cut": int(len(sentence) - kept.sum()),
                }
            )
        return rows

    def get_config(self):
        return {"name": self.name, **self.parts_config(), "labels": self.labels,
                "dropout": self.dropout_rate}  # fmt: skip
