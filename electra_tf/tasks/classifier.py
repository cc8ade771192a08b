"""`ElectraClassifier`: the [CLS] head on the encoder (classification, regression)."""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.models.encoder import ElectraEncoder

__all__ = ["ElectraClassifier"]


def _initializer(encoder):
    return keras.initializers.TruncatedNormal(stddev=encoder.initializer_range)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraClassifier(keras.Model):
    """[CLS] vector -> dropout -> one dense layer, as the reference's classification head.

    With `num_outputs=1` it is a regression model (the reference's STS head).

    Args:
        encoder: an `ElectraEncoder` (e.g. the pre-trained discriminator's).
        num_outputs: classes (or 1 for regression).
        dropout: dropout before the dense layer (0.1).

    Call arguments:
        inputs: dict of `token_ids`, `padding_mask`, `segment_ids` `[B, S]`.

    Returns:
        `[B, num_outputs]` logits, or `[B]` for regression.

    Example:

    >>> encoder = ElectraEncoder(vocabulary_size=20, num_layers=1, hidden_dim=8,
    ...     embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=8)
    >>> classifier = ElectraClassifier(encoder, num_outputs=3)
    >>> ids = np.array([[2, 7, 8, 3]], "int32")
    >>> tuple(classifier({"token_ids": ids, "padding_mask": ids > 0,
    ...                   "segment_ids": 0 * ids}).shape)
    (1, 3)
    """

    def __init__(
        self,
        encoder: ElectraEncoder,
        num_outputs: int,
        dropout: float = 0.1,
        name="electra_classifier",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        self.encoder = encoder
        self.num_outputs = num_outputs
        self.dropout_rate = dropout
        self.dropout = keras.layers.Dropout(dropout, name="task_specific_dropout")
        self.output_dense = keras.layers.Dense(
            num_outputs, kernel_initializer=_initializer(encoder), name="task_specific_output"
        )

    def build(self, input_shape=None):
        if not self.encoder.built:
            self.encoder.build()
        self.output_dense.build((None, self.encoder.hidden_dim))
        self.built = True

    def call(self, inputs, training=None):
        first = self.encoder(inputs, training=training, first_position_only=True)
        pooled = self.dropout(first[:, 0, :], training=training)
        logits = self.output_dense(pooled)
        return ops.squeeze(logits, -1) if self.num_outputs == 1 else logits

    def get_config(self):
        return {
            "name": self.name,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "num_outputs": self.num_outputs,
            "dropout": self.dropout_rate,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)
