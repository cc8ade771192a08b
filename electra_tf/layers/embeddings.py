"""The embedding block ELECTRA's generator and discriminator share."""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.layers import initializers


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraEmbeddings(keras.layers.Layer):
    """Word, position and segment embeddings, summed, then LayerNorm and dropout.

    This is BERT's embedding block at ELECTRA's embedding size E. The
    `embeddings_project` that maps E to the encoder's hidden size belongs to
    each encoder, not to this shared block. The word table is a
    `keras.layers.ReversibleEmbedding`, so the generator's output layer can
    reuse it transposed (`token_embedding(x, reverse=True)`).

    Args:
        vocabulary_size: int, rows of the word table.
        embedding_dim: int, E.
        max_sequence_length: int, rows of the position table.
        num_segments: int, rows of the segment table.
        dropout: float, dropout after the LayerNorm.
        initializer_range: float, std of the truncated-normal init.
        layer_norm_epsilon: float.
        **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`, ...).

    Call arguments:
        token_ids: int `[B, S]`.
        segment_ids: int `[B, S]`.
        training: bool, whether dropout is active.

    Returns:
        `[B, S, E]`.

    Example:

    >>> layer = ElectraEmbeddings(vocabulary_size=10, embedding_dim=4,
    ...                           max_sequence_length=8, num_segments=2)
    >>> tuple(layer(np.zeros((2, 5), "int32"), np.zeros((2, 5), "int32")).shape)
    (2, 5, 4)
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        max_sequence_length,
        num_segments=2,
        dropout=0.1,
        initializer_range=0.02,
        layer_norm_epsilon=1e-12,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon

        def init():
            return initializers.TruncatedNormal(stddev=initializer_range)

        self.token_embedding = keras.layers.ReversibleEmbedding(
            vocabulary_size,
            embedding_dim,
            tie_weights=True,
            embeddings_initializer=init(),
            dtype=self.dtype_policy,
            name="word_embeddings",
        )
        self.position_embedding = keras.layers.Embedding(
            max_sequence_length,
            embedding_dim,
            embeddings_initializer=init(),
            dtype=self.dtype_policy,
            name="position_embeddings",
        )
        self.segment_embedding = keras.layers.Embedding(
            num_segments,
            embedding_dim,
            embeddings_initializer=init(),
            dtype=self.dtype_policy,
            name="token_type_embeddings",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")

    def build(self, token_ids_shape=None, segment_ids_shape=None):
        self.token_embedding.build(None)
        self.position_embedding.build(None)
        self.segment_embedding.build(None)
        self.layer_norm.build((None, None, self.embedding_dim))
        self.built = True

    def call(self, token_ids, segment_ids, training=None):
        length = ops.shape(token_ids)[1]
        words = self.token_embedding(token_ids)  # [B, S, E]
        positions = self.position_embedding(ops.arange(length))  # [S, E]
        segments = self.segment_embedding(segment_ids)  # [B, S, E]
        x = words + segments + positions[None, :, :]
        x = self.layer_norm(x)
        return self.dropout_layer(x, training=training)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "max_sequence_length": self.max_sequence_length,
                "num_segments": self.num_segments,
                "dropout": self.dropout,
                "initializer_range": self.initializer_range,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config
