"""BERT's text normalization (`transformers`' `BertTokenizer`) in graph ops.

Compared with `transformers`' `BertTokenizer` (5.x, the `tokenizers` one) over every
code point of the Basic Multilingual Plane, each as a word and between letters, with
the all-MiniLM-L6-v2 (BERT uncased) vocabulary: 115 of 63,488 code points tokenize
differently lower-cased and 36 cased, all characters that `tokenizers`' Unicode tables
predate (Arabic and Brahmic marks and punctuation added in Unicode 10-14, which
TensorFlow's tables know as marks or punctuation). On the movie-review, product-review,
tweet and editorial snippets (23,703 texts) the ids are the same, cased and uncased
(`tests/data/test_bert_tokenization.py`). One more difference: a word longer than 100
bytes is [UNK] here, where BERT's limit is 100 characters (words of 34 to 100
characters outside ASCII).
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

__all__ = ["normalize_text", "REMOVED_CHARACTERS", "SPACES"]

#: What BERT's "clean text" step deletes: control characters other than tab, newline and
#: carriage return (which separate words), format characters (soft hyphen, zero-width
#: joiners, byte-order mark), private-use characters and U+FFFD.
REMOVED_CHARACTERS = r"[\x{0}-\x{8}\x{B}\x{C}\x{E}-\x{1F}\x{7F}-\x{9F}\p{Cf}\p{Co}\x{FFFD}]"
#: Unicode's other spaces and line and paragraph separators, which BERT reads as a space
#: (the word splitter's own pattern knows ASCII whitespace only).
SPACES = r"[\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]"


def normalize_text(texts, lower_case: bool = True, strip_accents: bool = True):
    """BERT's normalization in graph ops, in `transformers`' order.

    1. `REMOVED_CHARACTERS` are deleted (a soft hyphen inside a word joins its halves)
       and `SPACES` become spaces;
    2. accents: decompose (NFD) and remove combining marks (Mn);
    3. lower-casing: Unicode's lower-case mapping. Not case folding, nor NFKC: "½",
       ligatures, full-width letters and "ß" stay what they are, as BERT keeps them.

    Args:
        texts: string tensor of any shape.
        lower_case: lower-case (BERT's uncased models).
        strip_accents: decompose (NFD) and remove combining marks.

    Returns:
        string tensor of the same shape.

    Example:

    >>> text = "Caf\u00e9 9 \u00bd We\u00adeks\u00a0\ufb01ne"
    >>> normalize_text(tf.constant([text])).numpy()[0].decode() == "cafe 9 \u00bd weeks \ufb01ne"
    True
    """
    texts = tf.strings.regex_replace(texts, REMOVED_CHARACTERS, "")
    texts = tf.strings.regex_replace(texts, SPACES, " ")
    if strip_accents:
        texts = tf_text.normalize_utf8(texts, "NFD")
        texts = tf.strings.regex_replace(texts, r"\p{Mn}", "")
    if lower_case:
        texts = tf.strings.lower(texts, encoding="utf-8")
    return texts
