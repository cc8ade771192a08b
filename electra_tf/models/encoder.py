"""The Transformer encoder under both ELECTRA models."""

from __future__ import annotations

import keras
import keras_hub

from electra_tf.layers import kernels
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

    Returns:
        `[B, S, H]` (or a list of L such tensors).

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

        if embeddings is None:
            embeddings = ElectraEmbeddings(
                vocabulary_size=vocabulary_size,
                embedding_dim=embedding_dim,
                max_sequence_length=max_sequence_length,
                num_segments=num_segments,
                dropout=dropout,
                initializer_range=initializer_range,
                layer_norm_epsilon=layer_norm_epsilon,
                dtype=self.dtype_policy,
                name="embeddings",
            )
        elif embeddings.embedding_dim != embedding_dim:
            raise ValueError(
                f"The shared embeddings have size {embeddings.embedding_dim}, but this encoder "
                f"expects embedding_dim={embedding_dim}."
            )
        self.embeddings = embeddings
        self.embeddings_project = None
        if embedding_dim != hidden_dim:
            self.embeddings_project = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=kernel_initializer(initialization, initializer_range),
                dtype=self.dtype_policy,
                name="embeddings_project",
            )
        self.transformer_layers = [
            keras_hub.layers.TransformerEncoder(
                intermediate_dim=intermediate_dim,
                num_heads=num_heads,
                dropout=dropout,
                activation=kernels.gelu_activation(),  # exact erf form
                layer_norm_epsilon=layer_norm_epsilon,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
                dtype=self.dtype_policy,
                name=f"transformer_layer_{i}",
            )
            for i in range(num_layers)
        ]

    def build(self, input_shape=None):
        if not self.embeddings.built:
            self.embeddings.build()
        if self.embeddings_project is not None:
            self.embeddings_project.build((None, None, self.embedding_dim))
        for layer in self.transformer_layers:
            layer.build((None, None, self.hidden_dim))
        kernels.speed_up(self)
        self.built = True

    def call(self, inputs, training=None, return_all_layers=False):
        padding_mask = inputs["padding_mask"]
        x = self.embeddings(inputs["token_ids"], inputs["segment_ids"], training=training)
        if self.embeddings_project is not None:
            x = self.embeddings_project(x)  # [B, S, H]
        outputs = []
        for layer in self.transformer_layers:
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
