"""Counter-based random numbers: each draw is a pure function of its coordinates.

ELECTRA's randomness (which positions to mask, how to show them, which token
the generator samples) is drawn here from a hash of
`(seed, step, stream, row, column)`, where `row` is the example's index in the
*global* batch. Three properties follow, none of which a stateful generator
gives:

- a run resumed from a checkpoint at step `s` draws exactly what the
  uninterrupted run drew at step `s` (nothing to save but the step);
- one replica and N replicas draw the same numbers for the same global
  batch, so the update does not depend on how the batch was split;
- the draws are reproducible from the seed alone.

The hash is MurmurHash3's 32-bit finalizer, a bijection with full avalanche,
applied to the coordinates one after another. It is plain integer graph code
(runs in `tf.data`, `tf.function` and XLA). Uniforms have 23 random bits and
lie strictly inside (0, 1), so `log(u)` and `log(-log(u))` are finite.
"""

from __future__ import annotations

from electra_tf.ops import backend, portable

tf = backend.tensorflow()

__all__ = ["fmix32", "row_keys", "uniform", "bits_to_uniform"]

_GOLDEN = 0x9E3779B9  # 2^32 / golden ratio: spreads consecutive counters apart


def _u32(value) -> tf.Tensor:
    """A Python int or an integer tensor as uint32 (taken modulo 2^32)."""
    if isinstance(value, int):
        return tf.constant(value & 0xFFFFFFFF, tf.uint32)
    value = tf.convert_to_tensor(value)
    if value.dtype == tf.uint32:
        return value
    if value.dtype != tf.int64:
        value = tf.cast(value, tf.int64)
    return tf.cast(tf.bitwise.bitwise_and(value, 0xFFFFFFFF), tf.uint32)


def fmix32(h: tf.Tensor) -> tf.Tensor:
    """MurmurHash3's 32-bit finalizer, elementwise on a uint32 tensor."""
    h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, tf.constant(16, tf.uint32)))
    h = h * tf.constant(0x85EBCA6B, tf.uint32)
    h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, tf.constant(13, tf.uint32)))
    h = h * tf.constant(0xC2B2AE35, tf.uint32)
    return tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, tf.constant(16, tf.uint32)))


def _absorb(h: tf.Tensor, value) -> tf.Tensor:
    return fmix32(tf.bitwise.bitwise_xor(h, _u32(value) * tf.constant(_GOLDEN, tf.uint32)) + 1)


def row_keys(seed: int, step, stream: int, rows) -> tf.Tensor:
    """Per-row uint32 keys for one random stream at one training step.

    Args:
        seed: the run's seed (any Python int).
        step: scalar integer tensor or int, the training step.
        stream: a small int naming the draw (masking, replacement, sampling, ...),
            so different draws of one step are independent.
        rows: integer tensor `[R]`, the rows' global indices.

    Returns:
        uint32 tensor `[R]` (int64 holding 32 bits on PyTorch).
    """
    if not backend.tensorflow_fast_paths():
        return portable.row_keys(seed, step, stream, rows)
    step = tf.cast(tf.convert_to_tensor(step), tf.int64)
    h = fmix32(_u32(seed ^ 0x5BD1E995))
    h = _absorb(h, seed >> 32)
    h = _absorb(h, step)
    h = _absorb(h, tf.bitwise.right_shift(step, tf.constant(32, tf.int64)))
    h = _absorb(h, stream)
    return _absorb(h, rows)


def uniform(keys: tf.Tensor, num_columns: int) -> tf.Tensor:
    """Uniform floats in (0, 1), one row per key.

    Args:
        keys: uint32 tensor `[R]` from `row_keys`.
        num_columns: int, C.

    Returns:
        float32 tensor `[R, C]`; entry (r, c) depends only on `keys[r]` and c.
    """
    if not backend.tensorflow_fast_paths():
        return portable.uniform(keys, num_columns)
    columns = tf.cast(tf.range(num_columns), tf.uint32) * tf.constant(_GOLDEN, tf.uint32)
    return bits_to_uniform(fmix32(tf.bitwise.bitwise_xor(keys[:, None], columns[None, :])))


def bits_to_uniform(h: tf.Tensor) -> tf.Tensor:
    """uint32 hashes to floats in (0, 1): the top 23 bits, centred in their interval.

    The extremes are 2^-24 and 1 - 2^-24, both exact in float32.
    """
    bits = tf.bitwise.right_shift(h, tf.constant(9, tf.uint32))
    return (tf.cast(bits, tf.float32) + 0.5) * (1.0 / 8388608.0)
