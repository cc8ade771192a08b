"""Gathering, scattering, Gumbel-max sampling and replaced-token labels.

Pure functions with shapes in their docstrings; B is the batch, S the
sequence length, N the number of masked slots, V the vocabulary size.
"""

from __future__ import annotations

from electra_tf.ops import backend, portable
from electra_tf.ops.portable import vocabulary_blocks

tf = backend.tensorflow()

__all__ = [
    "gather_positions",
    "scatter_update",
    "gumbel_max_sample",
    "inverse_cdf_sample",
    "block_argmax",
    "vocabulary_blocks",
    "corrupt",
]


def gather_positions(sequence, positions) -> tf.Tensor:
    """Rows of `sequence` at `positions`, per example.

    Args:
        sequence: `[B, S]` or `[B, S, D]`.
        positions: int `[B, N]`.

    Returns:
        `[B, N]` or `[B, N, D]`.
    """
    if not backend.tensorflow_fast_paths():
        return portable.gather_positions(sequence, positions)
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
    if not backend.tensorflow_fast_paths():
        return portable.scatter_update(sequence, updates, positions, weights)
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
    if not backend.tensorflow_fast_paths():
        return portable.gumbel_max_sample(logits, noise_uniform, temperature, disallow)
    logits = tf.stop_gradient(tf.cast(logits, tf.float32))
    if temperature != 1.0:
        logits = logits / temperature
    if disallow is not None:
        logits = logits - 1000.0 * tf.one_hot(disallow, tf.shape(logits)[-1], dtype=tf.float32)
    gumbel = -tf.math.log(-tf.math.log(noise_uniform))
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int32)


def _blocks(values, length: int, fill: float):
    """`values` `[R, V]` as `[R, ceil(V / length), length]`, padded with `fill`."""
    vocabulary = values.shape[-1]
    extra = -vocabulary % length
    if extra:
        values = tf.pad(values, [[0, 0], [0, extra]], constant_values=fill)
    return tf.reshape(values, [tf.shape(values)[0], -1, length])


def _choose(masses, point):
    """For each row, the index where the cumulative `masses` `[R, K]` first exceed `point`
    `[R]`, and what is left of `point` inside it.

    `point` is kept below the row's total by a hair where rounding would reach it, so a
    slot of zero mass is never chosen (it ends where the slot before it does).
    """
    cumulative = tf.cumsum(masses, axis=-1)
    point = tf.minimum(point, cumulative[:, -1] * (1.0 - 2.0**-22))
    index = tf.reduce_sum(tf.cast(cumulative <= point[:, None], tf.int32), axis=-1)
    index = tf.minimum(index, tf.shape(masses)[1] - 1)
    before = tf.gather(tf.pad(cumulative, [[0, 0], [1, 0]]), index, batch_dims=1)
    return index, point - before


def inverse_cdf_sample(logits, uniform, temperature: float = 1.0, disallow=None):
    """Samples ids from softmax(logits / temperature) by inverting its CDF, in two levels.

    Draws the same distribution as `gumbel_max_sample` from one uniform per row instead
    of one per vocabulary entry. The row is cut into blocks of `vocabulary_blocks(V)`
    entries: the block is chosen from the cumulative block masses, then a slice of 128
    inside it, then the entry inside that slice. That costs a max, an exp and a sum over the
    row, where Gumbel-max needs a random word, two logs and an argmax for every entry
    (640 x 30,522 logits: 1.8x less time for the generator head's loss and sampling; see
    docs/results/performance.md). An entry whose probability underflows to 0 in float32
    is never drawn. Computed in float32 whatever the logits' dtype; no gradient flows.

    Args:
        logits: `[..., V]`, V known when tracing.
        uniform: float32 `[...]` uniform in [0, 1).
        temperature: positive float.
        disallow: optional int `[...]` ids whose logit is lowered by 1000 before sampling
            (the reference's `disallow_correct`).

    Returns:
        int32 `[...]`.
    """
    if not backend.tensorflow_fast_paths():
        return portable.inverse_cdf_sample(logits, uniform, temperature, disallow)
    logits = tf.stop_gradient(tf.cast(logits, tf.float32))
    outer = tf.shape(logits)[:-1]
    vocabulary = logits.shape[-1]
    if vocabulary is None:
        raise ValueError("inverse_cdf_sample needs the vocabulary size (the logits' last axis).")
    logits = tf.reshape(logits, [-1, vocabulary])
    rows = tf.shape(logits)[0]
    if temperature != 1.0:
        logits = logits / temperature
    if disallow is not None:
        where = tf.stack([tf.range(rows), tf.reshape(tf.cast(disallow, tf.int32), [-1])], 1)
        logits = tf.tensor_scatter_nd_sub(logits, where, tf.fill([rows], 1000.0))
    length = vocabulary_blocks(vocabulary)
    blocks = _blocks(logits, length, float("-inf"))  # [R, K, L]
    top = tf.reduce_max(tf.reduce_max(blocks, axis=-1), axis=-1)  # [R]
    mass = tf.exp(blocks - top[:, None, None])  # [R, K, L], in [0, 1]
    block_mass = tf.reduce_sum(mass, axis=-1)  # [R, K]
    point = tf.reshape(uniform, [-1]) * tf.reduce_sum(block_mass, axis=-1)
    block, point = _choose(block_mass, point)
    inside = tf.gather(mass, block, batch_dims=1)  # [R, L]
    # The chosen block again in slices of 128, so that no cumulative sum runs over more
    # than a few hundred entries (TensorFlow's CPU cumsum is slow on long rows).
    pieces = _blocks(inside, 128, 0.0)  # [R, ceil(L / 128), 128]
    piece, point = _choose(tf.reduce_sum(pieces, axis=-1), point)
    entry, _ = _choose(tf.gather(pieces, piece, batch_dims=1), point)
    ids = block * length + tf.minimum(piece * 128 + entry, length - 1)
    return tf.reshape(ids, outer)


def block_argmax(logits):
    """`tf.argmax(logits, axis=-1)` (first maximum on ties) from one max pass and one block.

    Args:
        logits: float `[..., V]`, V known when tracing.

    Returns:
        int32 `[...]`.
    """
    if not backend.tensorflow_fast_paths():
        return portable.block_argmax(logits)
    outer = tf.shape(logits)[:-1]
    vocabulary = logits.shape[-1]
    flat = tf.reshape(logits, [-1, vocabulary])
    length = vocabulary_blocks(vocabulary)
    blocks = _blocks(flat, length, flat.dtype.min)
    block = tf.argmax(tf.reduce_max(blocks, axis=-1), axis=-1, output_type=tf.int32)
    inside = tf.argmax(tf.gather(blocks, block, batch_dims=1), axis=-1, output_type=tf.int32)
    return tf.reshape(block * length + inside, outer)


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
    if not backend.tensorflow_fast_paths():
        return portable.corrupt(token_ids, positions, weights, samples)
    token_ids = tf.cast(token_ids, tf.int32)
    corrupted = scatter_update(token_ids, tf.cast(samples, tf.int32), positions, weights)
    labels = tf.cast(tf.not_equal(corrupted, token_ids), tf.int32)
    return corrupted, labels
