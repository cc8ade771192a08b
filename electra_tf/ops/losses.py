"""The two losses of ELECTRA, as weighted sums with an explicit normalizer.

Each function returns the weighted *sum* divided by `normalizer`. On one
device the normalizer is the total weight (+1e-6, as in the reference), which
gives the plain mean. Under a distribution strategy the pretrainer passes the
total weight of the *global* batch, so each replica's loss is its share of
the global mean and the summed replica gradients equal the one-device
gradient exactly.
"""

from __future__ import annotations

import tensorflow as tf

__all__ = ["masked_lm_loss", "discriminator_loss", "weighted_mean_normalizer"]


def weighted_mean_normalizer(weights) -> tf.Tensor:
    """sum(weights) + 1e-6: the reference's denominator on one device."""
    return tf.reduce_sum(tf.cast(weights, tf.float32)) + 1e-6


def masked_lm_loss(logits, targets, weights, normalizer=None):
    """Cross-entropy at the masked positions.

    Args:
        logits: `[B, N, V]` (any float dtype; computed in float32).
        targets: int `[B, N]`.
        weights: float `[B, N]`, 0 for padding slots.
        normalizer: scalar; defaults to `weighted_mean_normalizer(weights)`.

    Returns:
        (loss scalar, per-slot cross-entropy float32 `[B, N]`).
    """
    logits = tf.cast(logits, tf.float32)
    weights = tf.cast(weights, tf.float32)
    per_slot = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(targets, tf.int32), logits=logits
    )
    if normalizer is None:
        normalizer = weighted_mean_normalizer(weights)
    return tf.reduce_sum(per_slot * weights) / normalizer, per_slot


def discriminator_loss(logits, labels, weights, normalizer=None):
    """Sigmoid cross-entropy of the replaced-token detector over real tokens.

    Args:
        logits: `[B, S]` (computed in float32).
        labels: int `[B, S]`, 1 for replaced.
        weights: float `[B, S]`, the padding mask ([CLS]/[SEP] included).
        normalizer: scalar; defaults to `weighted_mean_normalizer(weights)`.

    Returns:
        (loss scalar, per-token loss float32 `[B, S]`).
    """
    logits = tf.cast(logits, tf.float32)
    weights = tf.cast(weights, tf.float32)
    per_token = tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.float32), logits=logits
    )
    if normalizer is None:
        normalizer = weighted_mean_normalizer(weights)
    return tf.reduce_sum(per_token * weights) / normalizer, per_token
