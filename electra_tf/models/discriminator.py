"""The discriminator: an encoder that labels every token real or replaced."""

from __future__ import annotations

import keras

from electra_tf.layers.heads import ReplacedTokenDetectionHead
from electra_tf.models.encoder import ElectraEncoder


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDiscriminator(keras.Model):
    """An `ElectraEncoder` and a replaced-token-detection head.

    This is the model ELECTRA keeps after pre-training: fine-tuning, export
    and serving use its `encoder`. ELECTRA has no pooler; the "pooled" output
    is the [CLS] vector, `sequence_output[:, 0]`.

    Args:
        encoder: an `ElectraEncoder`, or None to build one from `encoder_kwargs`.
        **kwargs: sizes for a new encoder (see `ElectraEncoder`), then `name`, `dtype`.

    Call arguments:
        inputs: dict with `token_ids`, `segment_ids`, `padding_mask`, each `[B, S]`.
        training: bool.

    Returns:
        `[B, S]` logits, positive for "replaced".

    Example:

    >>> discriminator = ElectraDiscriminator(vocabulary_size=20, num_layers=1,
    ...     hidden_dim=8, embedding_dim=8, num_heads=2, intermediate_dim=16,
    ...     max_sequence_length=8)
    >>> ids = np.array([[1, 5, 6, 2]], "int32")
    >>> tuple(discriminator({"token_ids": ids, "segment_ids": 0 * ids,
    ...                      "padding_mask": ids > 0}).shape)
    (1, 4)
    """

    def __init__(self, encoder=None, name="discriminator", dtype=None, **encoder_kwargs):
        super().__init__(name=name, dtype=dtype)
        if encoder is None:
            encoder = ElectraEncoder(dtype=self.dtype_policy, name="encoder", **encoder_kwargs)
        self.encoder = encoder
        self.rtd_head = ReplacedTokenDetectionHead(
            hidden_dim=encoder.hidden_dim,
            initializer_range=encoder.initializer_range,
            initialization=encoder.initialization,
            dtype=self.dtype_policy,
            name="discriminator_predictions",
        )

    def build(self, input_shape=None):
        if not self.encoder.built:
            self.encoder.build()
        self.rtd_head.build((None, None, self.encoder.hidden_dim))
        self.built = True

    def call(self, inputs, training=None):
        return self.rtd_head(self.encoder(inputs, training=training))

    def get_config(self):
        return {**self.encoder.get_config(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)
