"""Gathering, scattering, Gumbel-max sampling and replaced-token labels.

Pure functions with shapes in their docstrings; B is the batch, S the
sequence length, N the number of masked slots, V the vocabulary size.
"""

from __future__ import annotations

import tensorflow as tf

__all__ = ["gather_positions", "scatter_update", "gumbel_max_sample", "corrupt"]


def gather_positions(sequence, positions) -> tf.Tensor:
    """Rows of `sequence` at `positions`, per example.

    Args:
        sequence: `[B, S]` or `[B, S, D]`.
        positions: int `[B, N]`.

    Returns:
        `[B, N]` or `[B, N, D]`.
    """
    return tf.gather(sequence, positions, batch_dims=1)


def scatter_update(sequence, updates, positions, weights) -> tf.Tensor:
    """`sequence` with `updates` written at `positions` where `weights` > 0.

    Slots with weight 0 change nothing (padding slots may point anywhere). If
    a position is listed more than once, the update of the last such slot wins.

    Args:
        sequence: `[B, S]`.
        updates: `[B, N]`, same dtype as `sequence`.
        positions: int `[B, N]`.
        weights: float or bool `[B, N]`.

    Returns:
        `[B, S]`.
    """
    length = tf.shape(sequence)[1]
    num_slots = tf.shape(positions)[1]
    hits = tf.logical_and(
        tf.equal(positions[:, :, None], tf.range(length)[None, None, :]),
        tf.cast(weights, tf.bool)[:, :, None],
    )  # [B, N, S]
    rank = tf.where(hits, tf.range(1, num_slots + 1)[None, :, None], 0)  # later slot, higher rank
    winner = tf.argmax(rank, axis=1, output_type=tf.int32)  # [B, S]
    written = tf.reduce_any(hits, axis=1)  # [B, S]
    chosen = tf.gather(updates, winner, batch_dims=1)  # [B, S]
    return tf.where(written, chosen, sequence)


def gumbel_max_sample(logits, noise_uniform, temperature: float = 1.0, disallow=None):
    """Samples ids from softmax(logits / temperature) by the Gumbel-max trick.

    Computed in float32 whatever the logits' dtype; no gradient flows.

    Args:
        logits: `[..., V]`.
        noise_uniform: float32 `[..., V]` uniform in (0, 1).
        temperature: positive float.
        disallow: optional int `[...]` ids whose logit is lowered by 1000 before
            sampling (the reference's `disallow_correct`).

    Returns:
        int32 `[...]`.
    """
    logits = tf.stop_gradient(tf.cast(logits, tf.float32))
    if temperature != 1.0:
        logits = logits / temperature
    if disallow is not None:
        logits = logits - 1000.0 * tf.one_hot(disallow, tf.shape(logits)[-1], dtype=tf.float32)
    gumbel = -tf.math.log(-tf.math.log(noise_uniform))
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int32)


def corrupt(token_ids, positions, weights, samples):
    """The discriminator's input and labels.

    The sampled ids replace the originals at the used slots; a position is
    labelled 1 ("replaced") only if its token changed, so a sample equal to
    the original counts as real.

    Args:
        token_ids: int32 `[B, S]`, the original ids.
        positions, weights: `[B, N]` from masking.
        samples: int32 `[B, N]`.

    Returns:
        (corrupted_ids int32 `[B, S]`, labels int32 `[B, S]`).
    """
    token_ids = tf.cast(token_ids, tf.int32)
    corrupted = scatter_update(token_ids, tf.cast(samples, tf.int32), positions, weights)
    labels = tf.cast(tf.not_equal(corrupted, token_ids), tf.int32)
    return corrupted, labels
