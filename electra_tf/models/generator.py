"""The generator: a small masked language model whose output layer is the word table."""

from __future__ import annotations

import keras
import keras_hub

from electra_tf.layers import initializers
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.ops import backend


class _GatheringMaskedLMHead(keras_hub.layers.MaskedLMHead):
    """keras-hub's `MaskedLMHead` (same weights and maths) gathering with one int32 gather.

    Keras's `take_along_axis`, which the original uses, casts the positions to int64,
    broadcasts them over the hidden size and transposes them: an int64 Transpose, which
    oneDNN answers with "oneDNN supports DT_INT64 only on platforms with AVX-512" on
    every run (on AVX-512 machines too). A batched gather reads the same rows. Other
    backends take keras-hub's own call.
    """

    def call(self, inputs, mask_positions):
        if not backend.tensorflow_fast_paths():
            return super().call(inputs, mask_positions)
        tf = backend.tensorflow()
        positions = tf.cast(mask_positions, tf.int32)
        x = tf.gather(inputs, positions, batch_dims=1)  # [B, N, H]
        x = self._intermediate_dense(x)
        x = self._intermediate_layer_norm(x)
        if self.token_embedding:
            outputs = self.token_embedding(x, reverse=True)
        else:
            outputs = keras.ops.matmul(x, self._kernel)
        dtype = self.compute_dtype
        outputs = keras.ops.cast(outputs, dtype) + keras.ops.cast(self._bias, dtype)
        return self.activation(outputs) if self.activation is not None else outputs


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraGenerator(keras.Model):
    """An `ElectraEncoder` and an MLM head that scores the vocabulary at masked positions only.

    The head is keras-hub's `MaskedLMHead` (gathering with one batched gather): it
    gathers the masked positions
    first, then applies dense(E, gelu), LayerNorm and the word-embedding table
    transposed plus an output bias (the reference's `generator_predictions`),
    so vocabulary logits are computed for N positions, not S.

    Args:
        encoder: the `ElectraEncoder` (with shared embeddings when tied), or
            None to build one from `encoder_kwargs`.
        **kwargs: sizes for a new encoder (see `ElectraEncoder`), then `name`, `dtype`.

    Call arguments:
        inputs: dict with `token_ids`, `segment_ids`, `padding_mask` `[B, S]`
            and `mask_positions` int `[B, N]`.
        training: bool.

    Returns:
        `[B, N, V]` logits.

    Example:

    >>> generator = ElectraGenerator(vocabulary_size=20, num_layers=1, hidden_dim=4,
    ...     embedding_dim=8, num_heads=1, intermediate_dim=16, max_sequence_length=8)
    >>> ids = np.array([[1, 5, 6, 2]], "int32")
    >>> logits = generator({"token_ids": ids, "segment_ids": 0 * ids,
    ...                     "padding_mask": ids > 0, "mask_positions": np.array([[1, 2]])})
    >>> tuple(logits.shape)
    (1, 2, 20)
    """

    def __init__(self, encoder=None, name="generator", dtype=None, **encoder_kwargs):
        super().__init__(name=name, dtype=dtype)
        if encoder is None:
            encoder = ElectraEncoder(dtype=self.dtype_policy, name="encoder", **encoder_kwargs)
        self.encoder = encoder
        self.mlm_head = _GatheringMaskedLMHead(
            token_embedding=encoder.embeddings.token_embedding,
            intermediate_activation="gelu",
            layer_norm_epsilon=encoder.layer_norm_epsilon,
            kernel_initializer=initializers.TruncatedNormal(stddev=encoder.initializer_range),
            dtype=self.dtype_policy,
            name="generator_predictions",
        )

    def build(self, input_shape=None):
        if not self.encoder.built:
            self.encoder.build()
        self.mlm_head.build((None, None, self.encoder.hidden_dim), (None, None))
        self.built = True

    def call(self, inputs, training=None):
        sequence = self.encoder(inputs, training=training)  # [B, S, H]
        return self.mlm_head(sequence, mask_positions=inputs["mask_positions"])  # [B, N, V]

    def get_config(self):
        return {**self.encoder.get_config(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)
