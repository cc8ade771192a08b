"""Layers keras and keras-hub do not already give faithfully."""

from electra_tf.layers.embeddings import ElectraEmbeddings
from electra_tf.layers.heads import ReplacedTokenDetectionHead

__all__ = ["ElectraEmbeddings", "ReplacedTokenDetectionHead"]
