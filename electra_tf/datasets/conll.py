"""CoNLL-style files: one word per line, its tag in the last column, sentences apart.

A CoNLL file has one word per line, its tag in the last column (the word in
the first; columns split on whitespace), and a blank line between sentences;
`-DOCSTART-` lines are skipped. Tags are BIO (IOB2), IOB1 or IOBES.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets.readers import ReadReport, utf8_text

__all__ = ["TaggedSentence", "read_conll"]


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
    """One sentence: its words and their tags (a list, or None when the file has none)."""

    words: tuple
    label: tuple | None  # the tags ("label", as other examples, for the shared readers)
    guid: str = ""

    @property
    def text_a(self) -> str:
        return " ".join(self.words)

    text_b = None


def _sentences(lines):
    """(first line number, [(line number, columns)]) per sentence."""
    block = []
    for number, line in enumerate(lines, 1):
        columns = line.split()
        if not columns or columns[0] == "-DOCSTART-":
            if block:
                yield block
            block = []
            continue
        block.append((number, columns))
    if block:
        yield block


def read_conll(path, needs_labels: bool = True) -> tuple[list, ReadReport]:
    """The `TaggedSentence`s of a CoNLL file, and what was skipped.

    A line with a single column has no tag: in a file that needs labels its word is
    skipped and counted (`malformed_rows`, with line numbers); in a test file without
    tags every line is a word.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path} does not exist.")
    text = utf8_text(path).removeprefix("\ufeff")
    if not text.strip():
        raise ConfigError(f"{path} is empty.")
    if text.lstrip().startswith("{"):
        raise ConfigError(f"{path} looks like JSON Lines, not CoNLL; pass --format jsonl.")
    report = ReadReport()
    tagged = any(len(line.split()) > 1 for line in text.splitlines())
    sentences = []
    for block in _sentences(text.splitlines()):
        words, tags = [], []
        for number, columns in block:
            if tagged and len(columns) < 2:
                report.skipped["malformed_rows"] += 1
                report.skipped_rows.setdefault("malformed_rows", []).append(number)
                continue
            words.append(columns[0])
            tags.append(columns[-1] if tagged else None)
        if words:
            label = tuple(tags) if tagged else None
            sentences.append(TaggedSentence(tuple(words), label, f"{path.name}:{block[0][0]}"))
    if needs_labels and not tagged:
        raise ConfigError(f"{path} has no tag column (one word per line, its tag last).")
    if not sentences:
        raise ConfigError(f"{path} holds no sentences.")
    report.read = len(sentences)
    return sentences, report
