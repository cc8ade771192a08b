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
    dense = isinstance(sequence_length, int)  # a Python int keeps the static length
    length = tf.cast(sequence_length, tf.int32)
    a_ids = tf.cast(segment_a, tf.int32)
    batch = a_ids.nrows(out_type=tf.int32)
    shape = [None, sequence_length] if dense else tf.stack([batch, length])
    # Row by row, the lengths kept; then every position is filled by index arithmetic, with
    # no ragged concatenation (whose integer Transpose oneDNN reports on stderr).
    length_a = tf.cast(a_ids.row_lengths(), tf.int32)
    if segment_b is None:
        kept_a = tf.minimum(length_a, length - 2)[:, None]  # [B, 1]
        kept_b = tf.zeros_like(kept_a)
        b_ids = None
    else:
        b_ids = tf.cast(segment_b, tf.int32)
        kept_a, kept_b = truncate_pair_lengths(
            length_a, tf.cast(b_ids.row_lengths(), tf.int32), length - 3
        )
        kept_a, kept_b = kept_a[:, None], kept_b[:, None]
    j = tf.range(sequence_length if dense else length)[None, :]  # [1, L]
    after_a = kept_a + 2  # where B starts, or the end of a single segment
    total = after_a + (kept_b + 1 if b_ids is not None else 0)

    def read(ids, start):  # [B, L]: ids[row, j - start], the index clipped into the row
        columns = ids.to_tensor(default_value=pad_id, shape=shape)  # [B, L]
        index = tf.clip_by_value(j - start, 0, tf.shape(columns)[1] - 1)
        return tf.gather(columns, tf.broadcast_to(index, tf.shape(columns)), batch_dims=1)

    token_ids = tf.where(j < after_a - 1, read(a_ids, 1), sep_id)
    if b_ids is not None:
        token_ids = tf.where((j >= after_a) & (j < total - 1), read(b_ids, after_a), token_ids)
    token_ids = tf.where(j == 0, cls_id, tf.where(j < total, token_ids, pad_id))
    padding_mask = tf.cast(j < total, tf.int32)
    segment_ids = tf.cast((j >= after_a) & (j < total), tf.int32)
    if b_ids is None:
        segment_ids = tf.zeros_like(segment_ids)
    return {"token_ids": token_ids, "padding_mask": padding_mask, "segment_ids": segment_ids}
