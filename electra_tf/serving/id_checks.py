"""The checks a served model runs on its inputs before anything reads them."""

from __future__ import annotations

import tensorflow as tf

__all__ = ["id_input_checks", "one_dimensional_text"]


def id_input_checks(
    input_word_ids, input_mask, input_type_ids, *, max_length: int, vocabulary_size: int,
    num_segments: int,
) -> list:  # fmt: skip
    """Assertions that `[batch, seq]` id inputs fit the model, each with a message naming the
    input (an id outside the vocabulary would otherwise reach a gather whose error names
    nothing)."""
    length = tf.shape(input_word_ids)[1]
    return [
        tf.debugging.assert_positive(
            length, message="input_word_ids has no positions; send at least [CLS] and [SEP]"
        ),
        tf.debugging.assert_non_negative(
            input_type_ids, message="input_type_ids must be non-negative segment ids"
        ),
        tf.debugging.assert_less(
            input_type_ids,
            num_segments,
            message=f"input_type_ids holds a segment id outside 0..{num_segments - 1}",
        ),
        tf.debugging.assert_less_equal(
            length,
            max_length,
            message=f"input_word_ids is longer than the model maximum of {max_length} "
            "positions; truncate the sequence",
        ),
        tf.debugging.assert_equal(
            tf.shape(input_mask),
            tf.shape(input_word_ids),
            message="input_mask must have the shape of input_word_ids",
        ),
        tf.debugging.assert_equal(
            tf.shape(input_type_ids),
            tf.shape(input_word_ids),
            message="input_type_ids must have the shape of input_word_ids",
        ),
        tf.debugging.assert_non_negative(
            input_mask, message="input_mask must hold 0 (padding) or 1 (a token)"
        ),
        tf.debugging.assert_less_equal(
            input_mask, 1, message="input_mask must hold 0 (padding) or 1 (a token)"
        ),
        tf.debugging.assert_positive(
            tf.reduce_sum(input_mask, axis=1),
            message="input_mask has an example with no token (all 0); send at least [CLS] and "
            "[SEP] for each",
        ),
        tf.debugging.assert_non_negative(
            input_word_ids, message="input_word_ids must be non-negative token ids"
        ),
        tf.debugging.assert_less(
            input_word_ids,
            vocabulary_size,
            message=f"input_word_ids holds an id outside the vocabulary of {vocabulary_size} "
            "tokens",
        ),
    ]


def one_dimensional_text(text, name: str):
    """`text` once a check has passed that it is a `[batch]` vector of strings.

    The signature declares `[None]`, but a served graph takes a `[batch, 1]` tensor too
    and would flatten it. Its static rank is 1, so a rank check would be folded away:
    the check compares the runtime shape's first and last sizes and the element count
    (all equal only for one dimension, or for a single text in any shape).
    """
    shape = tf.shape(text)
    flat = tf.logical_and(tf.equal(shape[0], shape[-1]), tf.equal(tf.size(text), shape[0]))
    check = tf.debugging.Assert(flat, [f"{name} must be a 1-D batch of strings [batch]", shape])
    with tf.control_dependencies([check]):
        return tf.identity(text)
