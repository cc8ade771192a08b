"""The Transformer encoder under both ELECTRA models."""

from __future__ import annotations

import keras
import keras_hub

from electra_tf.layers import initializers, kernels
from electra_tf.layers.embeddings import ElectraEmbeddings
from electra_tf.layers.heads import kernel_initializer


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraEncoder(keras.Model):
    """Embeddings, an optional E-to-H projection, and post-LayerNorm Transformer blocks.

    The blocks are keras-hub's `TransformerEncoder` with exact (erf) GELU and
    LayerNorm epsilon 1e-12, which is BERT's layout (attention, dropout,
    residual, LayerNorm; FFN, dropout, residual, LayerNorm). Kernels start from
    a truncated normal with std `initializer_range`, biases at zero. Once built,
    their dropout and attention projections run the faster forms of
    `electra_tf.layers.kernels` (same weights, same maths).

    Args:
        vocabulary_size, num_layers, hidden_dim, embedding_dim, num_heads,
        intermediate_dim, max_sequence_length, num_segments, dropout,
        initializer_range, layer_norm_epsilon: the sizes (see `EncoderConfig`).
        initialization: "reference" starts `embeddings_project` from Glorot uniform, as the
            reference code (built without an initializer, it gets TF1's default);
            "truncated_normal" from the truncated normal, as Hugging Face's port.
        embeddings: an `ElectraEmbeddings` to share with another encoder; a new
            one is made when None.
        **kwargs: passed to `keras.Model`.

    Call arguments:
        inputs: dict with int `token_ids`, `segment_ids` and `padding_mask`, each `[B, S]`.
        training: bool.
        return_all_layers: if True, return the list of every block's output.
        first_position_only: if True, the last block computes position 0 alone (its
            keys and values still read every position) and the result is `[B, 1, H]`:
            the same numbers as the full pass's first position, for heads that read
            only it (sequence classification), at about 1/7 less matmul work for 6 blocks.

    Returns:
        `[B, S, H]` (or a list of L such tensors; `[B, 1, H]` with `first_position_only`).

    Example:

    >>> encoder = ElectraEncoder(vocabulary_size=20, num_layers=2, hidden_dim=8,
    ...     embedding_dim=4, num_heads=2, intermediate_dim=16, max_sequence_length=8)
    >>> ids = np.array([[1, 5, 6, 2, 0]], "int32")
    >>> inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids > 0}
    >>> tuple(encoder(inputs).shape)
    (1, 5, 8)
    """

    def __init__(
        self,
        vocabulary_size,
        num_layers,
        hidden_dim,
        embedding_dim,
        num_heads,
        intermediate_dim,
        max_sequence_length=512,
        num_segments=2,
        dropout=0.1,
        initializer_range=0.02,
        layer_norm_epsilon=1e-12,
        embeddings=None,
        initialization="reference",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.embedding_dim = embedding_dim
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initialization = initialization

        self.embeddings = self._shared_or_new(embeddings)
        self.embeddings_project = None
        if embedding_dim != hidden_dim:
            self.embeddings_project = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=kernel_initializer(initialization, initializer_range),
                dtype=self.dtype_policy,
                name="embeddings_project",
            )
        self.transformer_layers = [self._block(i) for i in range(num_layers)]

    def _shared_or_new(self, embeddings):
        """`embeddings` (shared with another encoder) if given and of this encoder's size,
        else new ones."""
        if embeddings is None:
            return ElectraEmbeddings(
                vocabulary_size=self.vocabulary_size,
                embedding_dim=self.embedding_dim,
                max_sequence_length=self.max_sequence_length,
                num_segments=self.num_segments,
                dropout=self.dropout,
                initializer_range=self.initializer_range,
                layer_norm_epsilon=self.layer_norm_epsilon,
                dtype=self.dtype_policy,
                name="embeddings",
            )
        if embeddings.embedding_dim != self.embedding_dim:
            raise ValueError(
                f"The shared embeddings have size {embeddings.embedding_dim}, but this encoder "
                f"expects embedding_dim={self.embedding_dim}."
            )
        return embeddings

    def _block(self, index: int):
        """Block `index`: keras-hub's post-LayerNorm `TransformerEncoder`, exact GELU."""
        return keras_hub.layers.TransformerEncoder(
            intermediate_dim=self.intermediate_dim,
            num_heads=self.num_heads,
            dropout=self.dropout,
            activation=kernels.gelu_activation(),  # exact erf form
            layer_norm_epsilon=self.layer_norm_epsilon,
            kernel_initializer=initializers.TruncatedNormal(stddev=self.initializer_range),
            dtype=self.dtype_policy,
            name=f"transformer_layer_{index}",
        )

    def build(self, input_shape=None):
        if not self.embeddings.built:
            self.embeddings.build()
        if self.embeddings_project is not None:
            self.embeddings_project.build((None, None, self.embedding_dim))
        for layer in self.transformer_layers:
            layer.build((None, None, self.hidden_dim))
        kernels.speed_up(self)
        self.built = True

    def call(self, inputs, training=None, return_all_layers=False, first_position_only=False):
        padding_mask = inputs["padding_mask"]
        x = self.embeddings(inputs["token_ids"], inputs["segment_ids"], training=training)
        if self.embeddings_project is not None:
            x = self.embeddings_project(x)  # [B, S, H]
        outputs = []
        last = len(self.transformer_layers) - 1
        for i, layer in enumerate(self.transformer_layers):
            if first_position_only and i == last and not return_all_layers:
                x = first_position(layer, x, padding_mask, training)
            else:
                x = layer(x, padding_mask=padding_mask, training=training)
            outputs.append(x)
        return outputs if return_all_layers else x

    def get_config(self):
        return {
            "name": self.name,
            "vocabulary_size": self.vocabulary_size,
            "num_layers": self.num_layers,
            "hidden_dim": self.hidden_dim,
            "embedding_dim": self.embedding_dim,
            "num_heads": self.num_heads,
            "intermediate_dim": self.intermediate_dim,
            "max_sequence_length": self.max_sequence_length,
            "num_segments": self.num_segments,
            "dropout": self.dropout,
            "initializer_range": self.initializer_range,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initialization": self.initialization,
        }


def first_position(layer, x, padding_mask, training=None):
    """keras-hub `TransformerEncoder.call` for the query at position 0 only: `[B, 1, H]`.

    Attention's keys and values are every position of `x` `[B, S, H]` as in the full
    call; the query, the residuals, both LayerNorms and the feed-forward block see the
    first position alone, so their results equal the full call's first row (dropout
    draws its masks for the rows it sees). Post-LayerNorm blocks only (the encoder's).
    """
    if layer.normalize_first:
        raise ValueError("first_position takes post-LayerNorm blocks (normalize_first=False).")
    mask = None if padding_mask is None else keras.ops.expand_dims(padding_mask, 1)
    residual = x[:, :1, :]
    y = _attention_from_one_query(layer._self_attention_layer, residual, x, mask, training)
    y = layer._self_attention_layer_norm(
        layer._self_attention_dropout(y, training=training) + residual
    )
    z = layer._feedforward_output_dense(layer._feedforward_intermediate_dense(y))
    return layer._feedforward_layer_norm(layer._feedforward_dropout(z, training=training) + y)


def _attention_from_one_query(attention, query, x, mask, training):
    """`attention(query=query, value=x, key=x, ...)` for a query of one position, `[B, 1, H]`.

    The scores and the weighted sum of values are elementwise products summed, not
    einsums: as einsums their gradients are batched products over the query's length,
    1 here, whose operand TensorFlow 2.20's oneDNN matmul was caught writing outside its
    buffers on an AVX-512 Intel CPU with AMX (at a 64-byte stride, corrupting the heap in
    a classifier's training step; docs/results/onednn-matmul.md). The sums run in
    float32 whatever the layer's dtype. Same maths as keras's `_compute_attention`.
    """
    ops = keras.ops
    dtype = attention.compute_dtype
    q = attention._query_dense(query)  # [B, 1, N, Dh]
    k = attention._key_dense(x)  # [B, S, N, Dh]
    v = attention._value_dense(x)
    q = ops.multiply(q, ops.cast(attention._inverse_sqrt_key_dim, q.dtype))
    scores = ops.sum(ops.cast(q, "float32") * ops.cast(k, "float32"), axis=-1)  # [B, S, N]
    scores = ops.expand_dims(ops.transpose(scores, (0, 2, 1)), 2)  # [B, N, 1, S]
    probabilities = attention._masked_softmax(ops.cast(scores, dtype), mask)
    if attention._dropout > 0:
        probabilities = attention._dropout_layer(probabilities, training=training)
    weights = ops.expand_dims(ops.transpose(probabilities[:, :, 0, :], (0, 2, 1)), -1)
    context = ops.sum(ops.cast(weights, "float32") * ops.cast(v, "float32"), 1, keepdims=True)
    return attention._output_dense(ops.cast(context, dtype))  # [B, 1, H]
