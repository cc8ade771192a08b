"""WordPiece vocabularies: read a `vocab.txt`, or learn one from a corpus.

A vocabulary file has one token per line; a token's id is its line number
(BERT's convention). It must hold the five special tokens [PAD], [UNK],
[CLS], [SEP] and [MASK]; a learned vocabulary puts them first, in that order.
"""

from __future__ import annotations

import os
from pathlib import Path

from electra_tf.data.remote_files import is_remote

__all__ = [
    "SPECIAL_TOKENS",
    "VocabularyError",
    "read_vocabulary",
    "special_ids",
    "write_vocabulary",
    "learn_vocabulary",
]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_ID_NAMES = {"[PAD]": "pad", "[UNK]": "unk", "[CLS]": "cls", "[SEP]": "sep", "[MASK]": "mask"}


class VocabularyError(ValueError):
    """A vocabulary file that cannot be used, named in the message."""


def read_vocabulary(path: str | os.PathLike) -> list[str]:
    """The tokens of a vocab.txt, checked for the special tokens and duplicates."""
    remote = is_remote(str(path))  # gs://... (a prepare --runner beam version): tf.io.gfile
    path = str(path) if remote else Path(path)
    try:
        if remote:
            import tensorflow as tf

            if not tf.io.gfile.exists(path):
                raise FileNotFoundError(path)
            with tf.io.gfile.GFile(path, "rb") as file:
                text = file.read().decode("utf-8")
        else:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise VocabularyError(f"Vocabulary file {path} does not exist.") from None
    except UnicodeDecodeError:
        raise VocabularyError(f"Vocabulary file {path} is not UTF-8 text.") from None
    tokens = [line.rstrip("\r") for line in text.split("\n")]
    if tokens and tokens[-1] == "":
        tokens.pop()
    if not tokens:
        raise VocabularyError(f"Vocabulary file {path} is empty.")
    seen = set()
    for number, token in enumerate(tokens, start=1):
        if token in seen:
            raise VocabularyError(f"Vocabulary file {path} lists {token!r} twice (line {number}).")
        seen.add(token)
    for token in SPECIAL_TOKENS:
        if token not in seen:
            raise VocabularyError(
                f"Vocabulary file {path} has no {token} token; add it (the special tokens are "
                f"{' '.join(SPECIAL_TOKENS)})."
            )
    return tokens


def special_ids(tokens: list[str]) -> dict[str, int]:
    """{'pad': id, 'unk': id, 'cls': id, 'sep': id, 'mask': id} for a token list."""
    index = {token: i for i, token in enumerate(tokens)}
    return {_ID_NAMES[token]: index[token] for token in SPECIAL_TOKENS}


def write_vocabulary(tokens, path: str | os.PathLike) -> Path:
    """Writes tokens one per line (atomically)."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("".join(f"{t}\n" for t in tokens), encoding="utf-8")
    os.replace(temporary, path)
    return path


def learn_vocabulary(
    texts, vocabulary_size: int, lower_case: bool = True, strip_accents: bool | None = None
) -> list[str]:
    """Learns a WordPiece vocabulary with tensorflow-text's learner.

    Args:
        texts: an iterable of strings (sentences or documents), or a
            `tf.data.Dataset` of strings.
        vocabulary_size: the target size (the learner may return fewer).
        lower_case, strip_accents: the normalization the tokenizer will apply
            (see `ElectraTokenizer`); text is normalized the same way first.

    Returns:
        The tokens, the five special tokens first.
    """
    import tensorflow as tf
    from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset as learner

    from electra_tf.data.normalization import normalize_text

    if isinstance(texts, tf.data.Dataset):
        dataset = texts
    else:
        dataset = tf.data.Dataset.from_generator(
            lambda: iter(texts), output_signature=tf.TensorSpec([], tf.string)
        )
    strip = lower_case if strip_accents is None else strip_accents
    dataset = dataset.batch(1024).map(
        lambda batch: normalize_text(batch, lower_case=lower_case, strip_accents=strip)
    )
    vocabulary = learner.bert_vocab_from_dataset(
        dataset,
        vocab_size=vocabulary_size,
        reserved_tokens=list(SPECIAL_TOKENS),
        bert_tokenizer_params={"lower_case": False},
        learn_params={},
    )
    return list(vocabulary)
