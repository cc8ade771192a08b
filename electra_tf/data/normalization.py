"""BERT's text normalization (case folding, accent stripping) in graph ops."""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

__all__ = ["normalize_text"]


def normalize_text(texts, lower_case: bool = True, strip_accents: bool = True):
    """BERT's normalization in graph ops: case folding and accent stripping (NFD, drop Mn).

    Args:
        texts: string tensor of any shape.
        lower_case: fold case (Unicode case folding, as BERT's lower-casing).
        strip_accents: decompose (NFD) and remove combining marks.

    Returns:
        string tensor of the same shape.
    """
    if lower_case:
        texts = tf_text.case_fold_utf8(texts)
    if strip_accents:
        texts = tf_text.normalize_utf8(texts, "NFD")
        texts = tf.strings.regex_replace(texts, r"\p{Mn}", "")
    return texts
