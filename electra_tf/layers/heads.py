"""The discriminator's replaced-token-detection head.

The generator's head is keras-hub's `MaskedLMHead` (gather at the masked
positions, dense(E, gelu), LayerNorm, the word table transposed, a bias),
which is the reference's `generator_predictions` exactly; see
`electra_tf.models.generator`.
"""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.layers import initializers

__all__ = ["ReplacedTokenDetectionHead", "kernel_initializer"]


def kernel_initializer(initialization: str, initializer_range: float):
    """The initializer of a dense layer the reference builds without one.

    "reference": TF1's default for such layers, Glorot uniform; "truncated_normal": the
    truncated normal with std `initializer_range` (Hugging Face's choice).
    """
    if initialization == "reference":
        return initializers.GlorotUniform()
    if initialization == "truncated_normal":
        return initializers.TruncatedNormal(stddev=initializer_range)
    raise ValueError(
        f"initialization must be 'reference' or 'truncated_normal', got {initialization!r}."
    )


@keras.saving.register_keras_serializable(package="electra_tf")
class ReplacedTokenDetectionHead(keras.layers.Layer):
    """dense(H, gelu) then dense(1) per token: the logit that a token was replaced.

    The reference's `discriminator_predictions/{dense,dense_1}`: the hidden dense starts
    from the truncated normal, the 1-unit output from Glorot uniform (the reference
    builds it without an initializer) unless `initialization="truncated_normal"`.

    Args:
        hidden_dim: int, H.
        activation: the hidden activation (exact "gelu" by default).
        initializer_range: float, std of the truncated-normal kernel init.
        initialization: "reference" or "truncated_normal" (see `kernel_initializer`).
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

    def __init__(
        self,
        hidden_dim,
        activation="gelu",
        initializer_range=0.02,
        initialization="reference",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_dim = hidden_dim
        self.activation = activation
        self.initializer_range = initializer_range
        self.initialization = initialization
        self.dense = keras.layers.Dense(
            hidden_dim,
            activation=activation,
            kernel_initializer=initializers.TruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )
        self.dense_prediction = keras.layers.Dense(
            1,
            kernel_initializer=kernel_initializer(initialization, initializer_range),
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
                "initialization": self.initialization,
            }
        )
        return config
