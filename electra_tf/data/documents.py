"""Bytes of a corpus into documents (lists of sentences), and the count of what was read.

A chunk (`electra_tf.data.chunks`) holds pieces of files cut at document
boundaries; `chunk_documents` turns each piece into documents by its layout:

- "lines": one sentence per line, blank lines between documents (the reference's
  convention; the end of a piece, which ends at a file end or a blank line, ends one);
- "files": the piece (a whole file) is one document, split into sentences;
- "jsonl": one JSON object per line, its `field` split into sentences;
- "texts": each piece is one document's text (a TFDS record).

A line that is not UTF-8 is skipped and counted, unless its file was found to be
Windows-1252 / Latin-1 text (then every line is read in that encoding). A line over
`MAX_LINE_CHARS` characters is not a sentence but a paragraph or a whole text: it is
split into sentences, and what is still over `PIECE_CHARS` is cut at spaces, so its
text is packed rather than truncated to one example; the count and a note naming
the file say so.

Example:

>>> stats = CorpusStats()
>>> piece = ("a.txt", "utf-8", b"First line.\\nSecond.\\n\\nNext document.\\n", 0)
>>> documents_of("lines", [piece], stats)
[['First line.', 'Second.'], ['Next document.']]
>>> documents_of("lines", [("b.txt", "cp1252", b"Caf\\xe9 au lait.\\n", 0)], stats)
[['Café au lait.']]
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json

from electra_tf.data.sentences import split_sentences

__all__ = [
    "CorpusError",
    "CorpusStats",
    "MAX_LINE_CHARS",
    "PIECE_CHARS",
    "documents_of",
    "chunk_documents",
]

MAX_LINE_CHARS = 10_000  # a longer line is no sentence (about 2,000 tokens)
PIECE_CHARS = 1_000  # what is left of such a line after sentence splitting is cut to this
MAX_NOTES = 20


class CorpusError(ValueError):
    """A corpus that cannot be read at all, named in the message."""


@dataclasses.dataclass
class CorpusStats:
    """What reading found.

    `skipped` counts unusable input (binary, unreadable or empty files, lines that are
    not UTF-8 or not JSON, duplicate documents); `adjusted` counts input read other than
    its layout says (long lines split into sentences, files read as Windows-1252,
    truncated archives read up to the damage, documents cut at a chunk); `notes` holds
    one sentence per file concerned, for the user.
    """

    files: int = 0
    input_bytes: int = 0  # on-disk (compressed) bytes read
    documents: int = 0
    sentences: int = 0
    characters: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    skipped_files: list = dataclasses.field(default_factory=list)  # binary or unreadable
    adjusted: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    notes: list = dataclasses.field(default_factory=list)

    def skip(self, reason: str, count: int = 1) -> None:
        """Counts unusable input (a file, a line, a document) under `reason`."""
        self.skipped[reason] += count

    def adjust(self, reason: str, note: str | None = None, count: int = 1) -> None:
        """Counts input read differently from its layout; `note` names the file."""
        self.adjusted[reason] += count
        self.note(note)

    def note(self, note: str | None) -> None:
        """Keeps one sentence for the user (the first `MAX_NOTES` distinct ones)."""
        if note and note not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(note)

    def merge(self, other: CorpusStats) -> None:
        """Adds `other`'s counts, lists and notes (after this one's)."""
        self.files += other.files
        self.input_bytes += other.input_bytes
        self.documents += other.documents
        self.sentences += other.sentences
        self.characters += other.characters
        self.skipped.update(other.skipped)
        self.adjusted.update(other.adjusted)
        self.skipped_files.extend(other.skipped_files)
        for note in other.notes:
            self.note(note)

    def to_dict(self) -> dict:
        """The counts, lists and notes as JSON-ready values (the report's `corpus`)."""
        return {
            "files": self.files,
            "input_bytes": self.input_bytes,
            "documents": self.documents,
            "sentences": self.sentences,
            "characters": self.characters,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_files": list(self.skipped_files),
            "adjusted": dict(sorted(self.adjusted.items())),
            "notes": list(self.notes),
        }


def _cp1252(raw: bytes) -> str:
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
        return raw.decode("latin-1")


def _lines(encoding: str, data: bytes, stats: CorpusStats) -> list[str]:
    """The lines of a piece (split at \\n only, as `readline` does), decoded."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        lines = []
        for raw in data.split(b"\n"):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                if encoding == "cp1252":
                    lines.append(_cp1252(raw))
                else:
                    stats.skip("lines_not_utf8")
    if data.endswith(b"\n"):
        lines.pop()  # the empty string after the last newline
    return [line.rstrip("\r") for line in lines]


def _cut(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` in pieces of at most `size` characters, cut at the last space before that."""
    pieces, start = [], 0
    while len(text) - start > size:
        cut = text.rfind(" ", start + 1, start + size + 1)
        cut = cut if cut > start else start + size
        pieces.append(text[start:cut].strip())
        start = cut
    pieces.append(text[start:].strip())
    return [piece for piece in pieces if piece]


def _bounded(sentences: list[str], longest: int = MAX_LINE_CHARS) -> list[str]:
    """Sentences, any longer than `longest` characters cut into pieces (`_cut`)."""
    if all(len(s) <= longest for s in sentences):
        return sentences
    return [piece for s in sentences for piece in (_cut(s) if len(s) > longest else [s])]


def _long_line_note(name: str) -> str:
    return (
        f"{name} has lines of over {MAX_LINE_CHARS:,} characters; each was split into "
        "sentences (long_lines_split) rather than packed as one truncated sentence."
    )


def _line_documents(name, encoding, data, stats, field=None):
    documents, document = [], []
    for line in _lines(encoding, data, stats):
        line = line.strip()
        if not line:
            if document:
                documents.append(document)
                document = []
        elif len(line) > MAX_LINE_CHARS:
            stats.adjust("long_lines_split", _long_line_note(name))
            document.extend(_bounded(split_sentences(line), PIECE_CHARS))
        else:
            document.append(line)
    if document:
        documents.append(document)
    return documents


def _file_documents(name, encoding, data, stats, field=None):
    lines = _lines(encoding, data, stats)
    long = sum(len(line) > MAX_LINE_CHARS for line in lines)
    if long:
        stats.adjust("long_lines_split", _long_line_note(name), count=long)
    sentences = _bounded(split_sentences("\n".join(lines)))
    return [sentences] if sentences else []


def _jsonl_documents(name, encoding, data, stats, field="text"):
    documents = []
    for line in _lines(encoding, data, stats):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            stats.skip("lines_not_json")
            continue
        text = record.get(field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            stats.skip(f"records_without_{field}")
            continue
        sentences = _bounded(split_sentences(text))
        if sentences:
            documents.append(sentences)
    return documents


def _text_documents(name, encoding, text, stats, field=None):
    sentences = _bounded(split_sentences(text))
    if not sentences:
        stats.skip("empty_records")
        return []
    return [sentences]


_PARSERS = {
    "lines": _line_documents,
    "files": _file_documents,
    "jsonl": _jsonl_documents,
    "texts": _text_documents,
}


def documents_of(layout: str, pieces, stats: CorpusStats, field: str = "text") -> list:
    """The documents in `pieces` (`(file name, encoding, data, start byte)` each) of `layout`.

    Counts skipped and adjusted input in `stats` (not the documents: the caller does,
    once it knows which documents it keeps).
    """
    parse = functools.partial(_PARSERS[layout], field=field)
    documents = []
    for name, encoding, data, _ in pieces:
        documents.extend(parse(name, encoding, data, stats))
    return documents


def chunk_documents(chunk, stats: CorpusStats) -> list:
    """The documents of a `Chunk` (see `documents_of`)."""
    return documents_of(chunk.layout, chunk.pieces, stats, chunk.field)
