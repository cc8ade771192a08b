"""Graph tokenization with tensorflow-text: normalization, BERT splitting, WordPiece.

`ElectraTokenizer` is a `tf.Module`, so the same object that tokenizes the
corpus in `tf.data` goes into an exported preprocessing SavedModel, with the
vocabulary file as an asset. It uses only core ops (RegexReplace, StringLower) and
ops that tensorflow-text 2.12.1 registers (the version inside TF Serving's model
server): NormalizeUTF8, RegexSplitWithOffsets, WordpieceTokenizeWithOffsets. Its
ids are `transformers`' `BertTokenizer`'s on real text; `normalization` lists where
they differ.
"""

from __future__ import annotations

import os

import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.data.normalization import normalize_text
from electra_tf.data.vocabulary import (
    SPECIAL_TOKENS,
    VocabularyError,
    read_vocabulary,
    special_ids,
)

__all__ = ["ElectraTokenizer", "normalize_text"]


class ElectraTokenizer(tf.Module):
    """Text to WordPiece ids, as BERT's uncased tokenizer does, in TensorFlow ops.

    Args:
        vocab_file: path of a vocab.txt (one token per line, id = line number); it
            becomes an asset of a SavedModel holding the tokenizer.
        lower_case: fold case (default True, for uncased vocabularies).
        strip_accents: remove accents; defaults to `lower_case`, as in BERT.
        max_bytes_per_word: longer words become [UNK] (BERT: 100 bytes).
        vocabulary: the tokens themselves (id = position), instead of `vocab_file`; the
            lookup table then holds them as constants (no file needed, nor kept).

    Example:

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(
    ...     ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cafe", "is", "open", "##s", "."]))
    >>> tokenizer = ElectraTokenizer(path)
    >>> tokenizer.tokenize(["Café IS opens."]).to_list()
    [[5, 6, 7, 8, 9]]
    >>> tokenizer.detokenize([[5, 6, 7, 8, 9]]).numpy().tolist()
    [b'cafe is opens .']
    """

    def __init__(
        self,
        vocab_file=None,
        lower_case: bool = True,
        strip_accents: bool | None = None,
        max_bytes_per_word: int = 100,
        name: str = "electra_tokenizer",
        vocabulary=None,
    ):
        super().__init__(name=name)
        if (vocab_file is None) == (vocabulary is None):
            raise ValueError("Give the tokenizer either vocab_file or vocabulary.")
        self.vocab_file = None if vocab_file is None else os.fspath(vocab_file)
        if vocabulary is None:
            self.vocabulary = read_vocabulary(self.vocab_file)
        else:
            self.vocabulary = [str(token) for token in vocabulary]
            missing = [t for t in SPECIAL_TOKENS if t not in set(self.vocabulary)]
            if missing or len(set(self.vocabulary)) != len(self.vocabulary):
                raise VocabularyError(
                    f"The vocabulary given lacks {' '.join(missing)} or repeats a token; it "
                    f"needs each of {' '.join(SPECIAL_TOKENS)} once."
                )
        self.lower_case = bool(lower_case)
        self.strip_accents = self.lower_case if strip_accents is None else bool(strip_accents)
        ids = special_ids(self.vocabulary)
        self.pad_id, self.unk_id = ids["pad"], ids["unk"]
        self.cls_id, self.sep_id, self.mask_id = ids["cls"], ids["sep"], ids["mask"]
        self.vocabulary_size = len(self.vocabulary)
        if vocabulary is None:
            self._vocab_asset = tf.saved_model.Asset(self.vocab_file)
            initializer = tf.lookup.TextFileInitializer(
                self._vocab_asset,
                key_dtype=tf.string,
                key_index=tf.lookup.TextFileIndex.WHOLE_LINE,
                value_dtype=tf.int64,
                value_index=tf.lookup.TextFileIndex.LINE_NUMBER,
            )
        else:
            initializer = tf.lookup.KeyValueTensorInitializer(
                tf.constant(self.vocabulary), tf.range(self.vocabulary_size, dtype=tf.int64)
            )
        # Anonymous: a named table takes its name from str(asset), which holds a memory
        # address, so a later tokenizer could be handed a live table of another vocabulary
        # (a loaded export's, say) and silently use its ids.
        self._table = tf.lookup.StaticHashTable(
            initializer, default_value=self.unk_id, experimental_is_anonymous=True
        )
        self._bert = tf_text.BertTokenizer(
            self._table,
            token_out_type=tf.int64,
            unknown_token="[UNK]",
            max_bytes_per_word=max_bytes_per_word,
            lower_case=False,
        )
        self._id_to_token = tf.constant(self.vocabulary)

    @property
    def special_ids(self) -> dict[str, int]:
        return special_ids(self.vocabulary)

    def normalize(self, texts):
        return normalize_text(texts, self.lower_case, self.strip_accents)

    def tokenize_words(self, texts) -> tf.RaggedTensor:
        """Ids grouped by word: int64 ragged `[B, (words), (pieces)]` (TF-Hub's layout)."""
        texts = tf.convert_to_tensor(texts, tf.string)
        return self._bert.tokenize(self.normalize(texts))

    def tokenize(self, texts) -> tf.RaggedTensor:
        """Ids of each text.

        Args:
            texts: string tensor `[B]`.

        Returns:
            int64 ragged `[B, (tokens)]`.
        """
        return self.tokenize_words(texts).merge_dims(-2, -1)

    def detokenize(self, ids) -> tf.Tensor:
        """Ids back to space-joined text (WordPiece '##' pieces glued to their word)."""
        ids = tf.cast(ids, tf.int64)
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.RaggedTensor.from_tensor(tf.convert_to_tensor(ids))
        tokens = tf.gather(self._id_to_token, ids)
        joined = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
        return tf.strings.regex_replace(joined, " ##", "")

    def config(self) -> dict:
        return {
            "lower_case": self.lower_case,
            "strip_accents": self.strip_accents,
            "vocabulary_size": self.vocabulary_size,
            "special_ids": self.special_ids,
        }
