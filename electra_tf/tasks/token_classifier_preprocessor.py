"""Words to the encoder's inputs, with each word's first WordPiece marked for its tag."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from electra_tf.data.inputs import pack_inputs
from electra_tf.tasks.text_classifier_preprocessor import WordPiecePreprocessor

__all__ = ["ElectraTokenClassifierPreprocessor", "IGNORED", "pack_words", "as_words"]

IGNORED = -100  # the label of positions the loss skips ([CLS], [SEP], later pieces, padding)


def as_words(x) -> tf.RaggedTensor:
    """Sentences as a ragged `[B, (words)]` string tensor: lists of words, or texts split on
    whitespace."""
    if isinstance(x, tf.RaggedTensor):
        return x
    if isinstance(x, tf.Tensor):
        return tf.strings.split(x)
    x = list(x)
    if x and isinstance(x[0], str):
        return tf.strings.split(tf.constant(x))
    return tf.ragged.constant([[str(w) for w in words] for words in x], dtype=tf.string)


def pack_words(tokenizer, words: tf.RaggedTensor, sequence_length: int) -> dict:
    """`[CLS] pieces [SEP]` of `[B, (words)]` strings at `sequence_length`, and where words start.

    Each word is WordPiece-tokenized (a word with no pieces becomes [UNK]); words past
    `sequence_length - 2` pieces are cut off. Returns int32 `token_ids`, `padding_mask`,
    `segment_ids` `[B, sequence_length]`, `word_positions` (each kept word's first piece,
    0 for cut words) and `word_mask` (1 for kept words) `[B, W]`, and the ragged
    `starts` and `kept` `[B, (words)]` for placing tags. Graph code: the Keras
    preprocessor and the SavedModel's tagging signature both run it.
    """
    pieces = tokenizer.tokenize(words.flat_values)  # [N words, (pieces)]
    counts = pieces.row_lengths()
    unk = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.shape(counts)[0]], tf.cast(tokenizer.unk_id, pieces.dtype)),
        tf.ones_like(counts),
    )
    # [UNK] appended to every word, kept only where the word has no piece of its own.
    pieces = tf.concat([pieces, unk], axis=1)
    keep = tf.maximum(counts, 1)
    positions = tf.ragged.range(pieces.row_lengths())
    pieces = tf.ragged.boolean_mask(pieces, positions < keep[:, None])  # [N, (>=1)]
    per_word = tf.RaggedTensor.from_row_lengths(keep, words.row_lengths())  # [B, (W)]
    kept = tf.math.cumsum(per_word, axis=1) <= sequence_length - 2  # a prefix
    grouped = tf.RaggedTensor.from_row_lengths(pieces, words.row_lengths())  # [B, (W), (P)]
    grouped = tf.ragged.boolean_mask(grouped, kept)
    starts = tf.math.cumsum(per_word, axis=1, exclusive=True) + 1  # after [CLS]
    starts = starts * tf.cast(kept, starts.dtype)  # 0 for words cut off
    packed = pack_inputs(
        grouped.merge_dims(1, 2),
        sequence_length=sequence_length,
        cls_id=tokenizer.cls_id,
        sep_id=tokenizer.sep_id,
        pad_id=tokenizer.pad_id,
    )
    packed["word_positions"] = tf.cast(starts.to_tensor(0), tf.int32)
    packed["word_mask"] = tf.cast(kept, tf.int32).to_tensor(0)
    packed["starts"], packed["kept"] = starts, kept
    return packed


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenClassifierPreprocessor(WordPiecePreprocessor):
    """WordPiece each word, pack `[CLS] pieces [SEP]`, and say where each word starts.

    A word's tag goes on its first WordPiece; the later pieces, the special tokens and
    the padding get `IGNORED` (the reference code, Model Garden and Hugging Face do the
    same). A word with no pieces (only characters the tokenizer drops) becomes [UNK].
    Words past `sequence_length - 2` pieces are cut off; `word_mask` says which words
    kept a position.

    Args:
        vocabulary, lower_case, strip_accents, sequence_length, pad_to: as
            `ElectraTextClassifierPreprocessor`.

    Call arguments:
        x: sentences, as lists of words or as texts split on whitespace.
        y: tag ids per word (ragged `[B, (words)]`), or None.

    Returns:
        dict of int32 `token_ids`, `padding_mask`, `segment_ids` `[B, L]`,
        `word_positions` and `word_mask` `[B, W]` (W: the most words in the batch);
        with `y`, `(inputs, labels)`, labels `[B, L]` holding each word's tag at its
        first piece and `IGNORED` elsewhere.

    Example:

    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "new", "york", "##er"]
    >>> preprocessor = ElectraTokenClassifierPreprocessor(tokens, sequence_length=8)
    >>> inputs, labels = preprocessor([["New", "Yorker"]], y=tf.ragged.constant([[1, 2]]))
    >>> inputs["token_ids"].numpy().tolist(), inputs["word_positions"].numpy().tolist()
    ([[2, 5, 6, 7, 3, 0, 0, 0]], [[1, 2]])
    >>> labels.numpy().tolist()
    [[-100, 1, 2, -100, -100, -100, -100, -100]]
    """

    def pack(self, words: tf.RaggedTensor, tags=None) -> dict:
        """Packed inputs at the full `sequence_length` (and `labels` when `tags` is given)."""
        packed = pack_words(self.tokenizer, words, self.sequence_length)
        starts, kept = packed.pop("starts"), packed.pop("kept")
        if tags is not None:
            tags = tf.ragged.boolean_mask(tf.cast(tags, tf.int32), kept)
            kept_starts = tf.ragged.boolean_mask(starts, kept)
            rows = tf.cast(kept_starts.value_rowids(), tf.int32)
            index = tf.stack([rows, tf.cast(kept_starts.flat_values, tf.int32)], axis=1)
            batch = tf.shape(packed["token_ids"])[0]
            labels = tf.fill([batch, self.sequence_length], IGNORED)
            packed["labels"] = tf.tensor_scatter_nd_update(labels, index, tags.flat_values)
        return packed

    def __call__(self, x, y=None, **kwargs):
        return super().__call__(as_words(x), y=y, **kwargs)

    def call(self, x, y=None):
        names = ("token_ids", "padding_mask", "segment_ids", "labels")
        packed = self.cut_to_longest(self.pack(x, y), names)
        labels = packed.pop("labels", None)
        return packed if labels is None else (packed, labels)

    def pack_all(self, sentences, tags=None, chunk: int = 2048) -> dict:
        """NumPy packed inputs of many sentences (`labels` too when `tags` is given);
        `word_positions` and `word_mask` padded to the most words of any sentence."""
        sentences = list(sentences)
        parts = []
        for start in range(0, len(sentences), chunk):
            words = as_words(sentences[start : start + chunk])
            chunk_tags = None
            if tags is not None:
                chunk_tags = tf.ragged.constant(list(tags[start : start + chunk]), dtype=tf.int32)
            parts.append({k: v.numpy() for k, v in self.pack(words, chunk_tags).items()})
        widest = max((p["word_positions"].shape[1] for p in parts), default=0)
        for part in parts:
            for name in ("word_positions", "word_mask"):
                extra = widest - part[name].shape[1]
                part[name] = np.pad(part[name], [(0, 0), (0, extra)])
        return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}

    def compute_output_shape(self, input_shape):
        names = ("token_ids", "padding_mask", "segment_ids", "word_positions", "word_mask")
        return {name: (None, None) for name in names}
