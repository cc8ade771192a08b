"""The reference ELECTRA code's Python `FullTokenizer`, re-implemented for `bench prepare`.

The reference (google-research/electra, `model/tokenization.py`, BERT's tokenizer)
is not pip-installable, so this module does what it does, step for step, to time it
beside our graph tokenizer: clean the text (drop NUL, U+FFFD and control characters,
turn whitespace into spaces), put spaces around CJK ideographs, split at whitespace,
lower-case and strip accents (NFD, drop Mn), split off every punctuation character
(ASCII non-alphanumerics included), then greedy longest-match-first WordPiece with
`##` continuations; a word over 200 characters, or one with no match, is `[UNK]`.

Example:

>>> tokenizer = FullTokenizer({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "!": 4})
>>> tokenizer.tokenize("Unaffable!  Xyz")
['un', '##aff', '##able', '!', '[UNK]']
"""

from __future__ import annotations

import unicodedata

__all__ = ["FullTokenizer", "load_vocabulary"]

_CJK = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)  # fmt: skip


def load_vocabulary(path) -> dict[str, int]:
    """{token: id}, one token a line (stripped), ids by line number, as the reference reads it."""
    with open(path, encoding="utf-8", errors="ignore") as handle:
        return {line.strip(): number for number, line in enumerate(handle)}


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK)


class FullTokenizer:
    """Basic tokenization then WordPiece, as the reference's `FullTokenizer` (module docstring).

    Args:
        vocabulary: {token: id} (see `load_vocabulary`).
        lower_case, strip_accents: as the reference's `do_lower_case` and `strip_accents`
            (accents are stripped only when lower-casing, as there).
    """

    def __init__(self, vocabulary: dict, lower_case: bool = True, strip_accents: bool = True):
        self.vocabulary = vocabulary
        self.lower_case, self.strip_accents = lower_case, strip_accents
        self.max_word_chars = 200

    def tokenize(self, text: str) -> list[str]:
        """WordPiece tokens of `text`."""
        return [piece for word in self._basic(text) for piece in self._wordpiece(word)]

    def ids(self, text: str) -> list[int]:
        """Token ids of `text` (what the reference's builder packs)."""
        return [self.vocabulary[token] for token in self.tokenize(text)]

    def _basic(self, text: str) -> list[str]:
        cleaned = []
        for char in text:
            if char == "\x00" or char == "\ufffd" or _is_control(char):
                continue
            if _is_cjk(char):
                cleaned.append(f" {char} ")
            else:
                cleaned.append(" " if _is_whitespace(char) else char)
        words = []
        for word in "".join(cleaned).split():
            if self.lower_case:
                word = word.lower()
                if self.strip_accents:
                    word = "".join(
                        c
                        for c in unicodedata.normalize("NFD", word)
                        if unicodedata.category(c) != "Mn"
                    )
            words.extend(self._split_punctuation(word))
        return " ".join(words).split()

    @staticmethod
    def _split_punctuation(word: str) -> list[str]:
        pieces, current = [], []
        for char in word:
            if _is_punctuation(char):
                if current:
                    pieces.append("".join(current))
                    current = []
                pieces.append(char)
            else:
                current.append(char)
        if current:
            pieces.append("".join(current))
        return pieces

    def _wordpiece(self, word: str) -> list[str]:
        if len(word) > self.max_word_chars:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocabulary:
                    found = piece
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]
            pieces.append(found)
            start = end
        return pieces
