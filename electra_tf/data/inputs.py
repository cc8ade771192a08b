"""Model inputs from tokenized segments: truncation, [CLS]/[SEP], segment ids, padding.

Pure TensorFlow ops (no tensorflow-text kernels), so the packing runs in
`tf.data`, in fine-tuning readers and inside exported serving graphs, including
TF Serving's model server (whose tensorflow-text lacks newer trimming ops).
"""

from __future__ import annotations

import tensorflow as tf

__all__ = ["truncate_pair_lengths", "pack_inputs"]


def truncate_pair_lengths(length_a, length_b, budget):
    """Kept lengths after BERT's longest-first truncation of a pair to `budget` tokens.

    BERT removes one token at a time from the longer segment (from the second
    on a tie) until the pair fits; the closed form: a segment shorter than its
    half of the budget is kept whole and the other gets the rest; otherwise A
    keeps ceil(budget / 2) and B floor(budget / 2).

    Args:
        length_a, length_b: int `[B]`.
        budget: scalar int, tokens available for both segments.

    Returns:
        (kept_a, kept_b) int `[B]`.

    Example:

    >>> a, b = truncate_pair_lengths(tf.constant([2, 9, 4, 3]), tf.constant([9, 1, 4, 1]), 5)
    >>> a.numpy().tolist(), b.numpy().tolist()
    ([2, 4, 3, 3], [3, 1, 2, 1])
    """
    length_a = tf.convert_to_tensor(length_a)
    length_b = tf.cast(length_b, length_a.dtype)
    budget = tf.cast(budget, length_a.dtype)
    high, low = (budget + 1) // 2, budget // 2
    fits = length_a + length_b <= budget
    kept_a = tf.where(length_a < high, length_a, tf.where(length_b < low, budget - length_b, high))
    kept_b = budget - kept_a
    return tf.where(fits, length_a, kept_a), tf.where(fits, length_b, tf.minimum(length_b, kept_b))


def _keep_prefix(ragged, lengths):
    splits = ragged.row_splits.dtype
    positions = tf.ragged.range(ragged.row_lengths(), row_splits_dtype=splits)
    return tf.ragged.boolean_mask(ragged, positions < tf.cast(lengths, positions.dtype)[:, None])


def _int32(segment):
    # int32 ids and row splits: ragged ops on int64 row lengths include an int64 Transpose,
    # which oneDNN reports on stderr ("oneDNN supports DT_INT64 only on ... AVX-512").
    return tf.cast(segment, tf.int32).with_row_splits_dtype(tf.int32)


def pack_inputs(
    segment_a, segment_b=None, *, sequence_length: int, cls_id: int, sep_id: int, pad_id: int = 0
):
    """`[CLS] A [SEP] (B [SEP])`, truncated longest-first, padded to `sequence_length`.

    Args:
        segment_a: int ragged `[B, (tokens)]` (words already merged).
        segment_b: optional int ragged `[B, (tokens)]`.
        sequence_length: the output length.
        cls_id, sep_id, pad_id: the special ids.

    Returns:
        dict of int32 `[B, sequence_length]`: `token_ids`, `padding_mask`, `segment_ids`.

    Example:

    >>> a = tf.ragged.constant([[10, 11, 12, 13], [20]])
    >>> b = tf.ragged.constant([[30, 31], [40, 41, 42, 43, 44]])
    >>> packed = pack_inputs(a, b, sequence_length=8, cls_id=2, sep_id=3)
    >>> packed["token_ids"].numpy().tolist()
    [[2, 10, 11, 12, 3, 30, 31, 3], [2, 20, 3, 40, 41, 42, 43, 3]]
    >>> packed["segment_ids"].numpy().tolist()[1]
    [0, 0, 0, 1, 1, 1, 1, 1]
    """
    segment_a = _int32(segment_a)
    batch = segment_a.nrows()
    length = tf.cast(sequence_length, tf.int32)  # a Python int or a scalar tensor
    cls = tf.fill([batch, 1], cls_id)
    sep = tf.fill([batch, 1], sep_id)
    if segment_b is None:
        kept = tf.minimum(segment_a.row_lengths(), length - 2)
        a = _keep_prefix(segment_a, kept)
        ids = tf.concat([cls, a, sep], axis=1)
        segments = tf.zeros_like(ids)
    else:
        segment_b = _int32(segment_b)
        kept_a, kept_b = truncate_pair_lengths(
            segment_a.row_lengths(), segment_b.row_lengths(), length - 3
        )
        a, b = _keep_prefix(segment_a, kept_a), _keep_prefix(segment_b, kept_b)
        first = tf.concat([cls, a, sep], axis=1)
        second = tf.concat([b, sep], axis=1)
        ids = tf.concat([first, second], axis=1)
        segments = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
    # A Python int keeps the static shape [None, sequence_length].
    shape = (
        [None, sequence_length] if isinstance(sequence_length, int) else tf.stack([batch, length])
    )
    token_ids = ids.to_tensor(default_value=pad_id, shape=shape)
    padding_mask = tf.ones_like(ids).to_tensor(default_value=0, shape=shape)
    segment_ids = segments.to_tensor(default_value=0, shape=shape)
    return {"token_ids": token_ids, "padding_mask": padding_mask, "segment_ids": segment_ids}
