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
    "LEARNERS",
    "SPECIAL_TOKENS",
    "VocabularyError",
    "read_vocabulary",
    "special_ids",
    "write_vocabulary",
    "learn_vocabulary",
]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
#: How `learn_vocabulary` can learn (`electra_tf.data.vocabulary_learners`); the first is
#: the default.
LEARNERS = ("tokenizers", "tf-text")
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
    texts,
    vocabulary_size: int,
    lower_case: bool = True,
    strip_accents: bool | None = None,
    learner: str = "tokenizers",
) -> list[str]:
    """Learns a WordPiece vocabulary (`electra_tf.data.vocabulary_learners`).

    Args:
        texts: an iterable of strings (sentences or documents), or a
            `tf.data.Dataset` of strings.
        vocabulary_size: the target size, special tokens and alphabet included (the
            learner may return fewer).
        lower_case, strip_accents: the normalization the tokenizer will apply
            (see `ElectraTokenizer`); text is normalized the same way first.
        learner: "tokenizers" (Hugging Face `tokenizers`' WordPiece trainer: seconds)
            or "tf-text" (tensorflow-text's Python learner: minutes).

    Returns:
        The tokens, the five special tokens first.

    Raises:
        VocabularyError: an unknown `learner`.
    """
    from electra_tf.data import vocabulary_learners as learners

    strip = lower_case if strip_accents is None else strip_accents
    if learner == "tokenizers":
        learn = learners.learn_with_tokenizers
    elif learner == "tf-text":
        learn = learners.learn_with_tf_text
    else:
        raise VocabularyError(
            f"Unknown vocabulary learner {learner!r}; choose one of {', '.join(LEARNERS)}."
        )
    return learn(texts, vocabulary_size, lower_case, strip, SPECIAL_TOKENS)
