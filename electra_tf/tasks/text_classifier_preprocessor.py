"""Raw text (or text pairs) to the encoder's inputs, as a Keras layer usable in `tf.data`."""

from __future__ import annotations

import os
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import read_vocabulary
from electra_tf.ops import backend

__all__ = [
    "ElectraTextClassifierPreprocessor",
    "WordPiecePreprocessor",
    "PAD_TO",
    "compiles_each_shape",
    "VOCABULARY_ASSET",
    "length_multiple",
]

PAD_TO = ("longest", "max")
VOCABULARY_ASSET = "vocabulary.txt"
INPUTS = ("token_ids", "padding_mask", "segment_ids")


_backend = backend.name  # read at each call, so a test can name another backend here


def compiles_each_shape() -> bool:
    """Whether the backend compiles a program for each new input shape (JAX: XLA)."""
    return _backend() == "jax"


def length_multiple(sequence_length: int) -> int:
    """What packed batches' lengths are rounded up to: 1 on TensorFlow and PyTorch, where a
    new length costs nothing; on JAX, where each new length is a new program for XLA to
    compile, a quarter of `sequence_length` (a multiple of 8): at most four lengths per
    batch size (32 of 128, 128 of 512)."""
    if not compiles_each_shape():
        return 1
    return min(int(sequence_length), -(-int(sequence_length) // 32) * 8)


def _as_strings(texts) -> tf.Tensor:
    if isinstance(texts, str):
        raise ValueError("Give a batch of texts (a list of strings), not a single string.")
    return tf.convert_to_tensor(texts, tf.string)


class WordPiecePreprocessor(keras.layers.Layer):
    """What the task preprocessors share: a WordPiece vocabulary saved as an asset, casing,
    the longest packed input and the padding rule (see `ElectraTextClassifierPreprocessor`)."""

    def __init__(
        self,
        vocabulary=None,
        lower_case: bool = True,
        strip_accents: bool | None = None,
        sequence_length: int = 128,
        pad_to: str = "longest",
        **kwargs,
    ):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        # Its inputs stay TensorFlow's (strings, inside `tf.data` on every backend): Keras
        # would convert them to the backend's arrays first (JAX has no string tensors).
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        # Nothing to build (no weights). Left unbuilt until first called, it would make
        # Keras's `predict_on_batch` on JAX run the whole model eagerly before each
        # compiled batch (its check that every layer is built): 2.6x slower `predict`.
        self.built = True
        if pad_to not in PAD_TO:
            raise ValueError(f"pad_to must be one of {PAD_TO}, got {pad_to!r}.")
        if sequence_length < 3:
            raise ValueError(f"sequence_length must be at least 3, got {sequence_length}.")
        self.lower_case = bool(lower_case)
        self.strip_accents = self.lower_case if strip_accents is None else bool(strip_accents)
        self.sequence_length = int(sequence_length)
        self.pad_to = pad_to
        self.tokenizer = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def set_vocabulary(self, vocabulary) -> None:
        """Uses `vocabulary` (tokens, or a vocab.txt path) from now on."""
        if isinstance(vocabulary, str | os.PathLike):
            vocabulary = read_vocabulary(vocabulary)
        self.tokenizer = ElectraTokenizer(
            vocabulary=list(vocabulary),
            lower_case=self.lower_case,
            strip_accents=self.strip_accents,
        )

    @property
    def vocabulary(self) -> list[str]:
        if self.tokenizer is None:
            raise ValueError("This preprocessor has no vocabulary yet; call set_vocabulary.")
        return self.tokenizer.vocabulary

    def cut_to_longest(self, packed: dict, names) -> dict:
        """With `pad_to="longest"`, `names` cut to the batch's longest row, rounded up to
        8, or `length_multiple` where that is more (JAX)."""
        if self.pad_to != "longest":
            return packed
        multiple = max(8, length_multiple(self.sequence_length))
        longest = tf.reduce_max(tf.reduce_sum(packed["padding_mask"], axis=1))
        width = tf.minimum(
            self.sequence_length, (tf.maximum(longest, 1) + multiple - 1) // multiple * multiple
        )
        return {k: v[:, :width] if k in names else v for k, v in packed.items()}

    def save_assets(self, dir_path):
        Path(dir_path, VOCABULARY_ASSET).write_text(
            "".join(f"{token}\n" for token in self.vocabulary), encoding="utf-8"
        )

    def load_assets(self, dir_path):
        self.set_vocabulary(Path(dir_path, VOCABULARY_ASSET))

    def get_config(self):
        config = super().get_config()
        config.update(
            lower_case=self.lower_case,
            strip_accents=self.strip_accents,
            sequence_length=self.sequence_length,
            pad_to=self.pad_to,
        )
        return config


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifierPreprocessor(WordPiecePreprocessor):
    """WordPiece tokenization and `[CLS] A [SEP] (B [SEP])` packing of raw strings.

    Graph code (tensorflow-text), so it runs inside `tf.data.Dataset.map` and inside
    an exported SavedModel. The vocabulary is saved with the layer (an asset of a
    `.keras` file), so a saved classifier needs nothing else to read text.

    Args:
        vocabulary: the WordPiece tokens (id = position) or a vocab.txt path.
        lower_case: fold case and strip accents (uncased vocabularies, BERT's default).
        strip_accents: strip accents; defaults to `lower_case`, as in BERT.
        sequence_length: the longest packed input; longer inputs are truncated
            (a pair longest-first, as BERT does).
        pad_to: "longest" pads each batch to its longest row, rounded up to a multiple of
            8 (fast on CPUs and GPUs; on JAX of a quarter of `sequence_length`, so XLA
            compiles a few lengths, see `length_multiple`); "max" always pads to
            `sequence_length` (the static shape XLA and TPUs want).
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        x: strings `[B]` (a list, array or tensor), or a tuple `(text_a, text_b)` of two
            such batches for pair tasks.
        y, sample_weight: passed through untouched (for `tf.data.Dataset.map`).

    Returns:
        dict of int32 `token_ids`, `padding_mask`, `segment_ids` `[B, L]`, or
        `(inputs, y, sample_weight)` when `y` is given.

    Example:

    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "fine", "film"]
    >>> preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=16)
    >>> preprocessor(["A fine film", "Film"])["token_ids"].numpy().tolist()
    [[2, 5, 6, 7, 3, 0, 0, 0], [2, 7, 3, 0, 0, 0, 0, 0]]
    """

    def pack(self, text_a, text_b=None) -> dict:
        """Packed inputs at the full `sequence_length` `[B, sequence_length]`."""
        tokenizer = self.tokenizer
        if tokenizer is None:
            raise ValueError("This preprocessor has no vocabulary yet; call set_vocabulary.")
        return pack_inputs(
            tokenizer.tokenize(_as_strings(text_a)),
            None if text_b is None else tokenizer.tokenize(_as_strings(text_b)),
            sequence_length=self.sequence_length,
            cls_id=tokenizer.cls_id,
            sep_id=tokenizer.sep_id,
            pad_id=tokenizer.pad_id,
        )

    def __call__(self, x, y=None, sample_weight=None, **kwargs):
        # Python strings are not tensors to Keras's call checks; make them so first.
        x = tuple(_as_strings(t) for t in x) if isinstance(x, tuple) else _as_strings(x)
        return super().__call__(x, y=y, sample_weight=sample_weight, **kwargs)

    def call(self, x, y=None, sample_weight=None):
        text_a, text_b = x if isinstance(x, tuple) else (x, None)
        packed = self.cut_to_longest(self.pack(text_a, text_b), INPUTS)
        if y is None and sample_weight is None:
            return packed
        return keras.utils.pack_x_y_sample_weight(packed, y, sample_weight)

    def pack_all(self, text_a, text_b=None, chunk: int = 4096) -> dict:
        """NumPy `[N, sequence_length]` packed inputs of many texts, packed in chunks."""
        text_a = list(text_a)
        parts = []
        for start in range(0, len(text_a), chunk):
            b = None if text_b is None else list(text_b[start : start + chunk])
            packed = self.pack(text_a[start : start + chunk], b)
            parts.append({name: value.numpy() for name, value in packed.items()})
        if not parts:
            empty = np.zeros((0, self.sequence_length), np.int32)
            return {"token_ids": empty, "padding_mask": empty, "segment_ids": empty}
        return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}

    def truncated(self, text_a, text_b=None, chunk: int = 4096) -> int:
        """How many rows are longer than `sequence_length` (packing cuts them)."""
        text_a, count = list(text_a), 0
        for start in range(0, len(text_a), chunk):
            tokenize = self.tokenizer.tokenize
            total = tokenize(_as_strings(text_a[start : start + chunk])).row_lengths() + 2
            if text_b is not None:
                pair = _as_strings(list(text_b[start : start + chunk]))
                total += tokenize(pair).row_lengths() + 1
            count += int(tf.reduce_sum(tf.cast(total > self.sequence_length, tf.int32)))
        return count

    def compute_output_shape(self, input_shape):
        return {name: (None, None) for name in ("token_ids", "padding_mask", "segment_ids")}
