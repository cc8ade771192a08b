"""The discriminator's replaced-token-detection head.

The generator's head is keras-hub's `MaskedLMHead` (gather at the masked
positions, dense(E, gelu), LayerNorm, the word table transposed, a bias),
which is the reference's `generator_predictions` exactly; see
`electra_tf.models.generator`.
"""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="electra_tf")
class ReplacedTokenDetectionHead(keras.layers.Layer):
    """dense(H, gelu) then dense(1) per token: the logit that a token was replaced.

    The reference's `discriminator_predictions/{dense,dense_1}`.

    Args:
        hidden_dim: int, H.
        activation: the hidden activation (exact "gelu" by default).
        initializer_range: float, std of the truncated-normal kernel init.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        sequence_output: `[B, S, H]`.

    Returns:
        `[B, S]` logits.

    Example:

    >>> head = ReplacedTokenDetectionHead(hidden_dim=4)
    >>> tuple(head(np.zeros((2, 3, 4), "float32")).shape)
    (2, 3)
    """

    def __init__(self, hidden_dim, activation="gelu", initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_dim = hidden_dim
        self.activation = activation
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            hidden_dim,
            activation=activation,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )
        self.dense_prediction = keras.layers.Dense(
            1,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy,
            name="dense_1",
        )

    def build(self, input_shape):
        self.dense.build(input_shape)
        self.dense_prediction.build(tuple(input_shape[:-1]) + (self.hidden_dim,))
        self.built = True

    def call(self, sequence_output):
        return ops.squeeze(self.dense_prediction(self.dense(sequence_output)), axis=-1)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_dim": self.hidden_dim,
                "activation": self.activation,
                "initializer_range": self.initializer_range,
            }
        )
        return config
