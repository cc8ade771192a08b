"""A corpus cut into chunks of whole documents, the same way whatever reads them.

One process reads the input files in order (decompressing `.gz` and `.bz2`) and cuts
them into pieces of about `target` bytes at document boundaries: a blank line in the
"lines" layout, a line end for JSON Lines and in the "files" layout (whose pieces are
whole files unless a file is over twice the target). Where no boundary comes within
twice the target, the cut falls at a line end (or, inside one enormous line, at a
space) and is counted. Consecutive pieces form a `Chunk` of at least `target` bytes.
The cuts depend only on the bytes and the target, so any number of workers turning
chunks into examples, joined in chunk order, gives the same output.

Each file's first 64 KB decide what it is: binary (a NUL byte, or over 10% control
bytes) is skipped and listed; text that is not UTF-8, holds no UTF-8 multi-byte
sequence and is at least 70% ASCII is read as Windows-1252 (Latin-1); other text
that is not UTF-8 (Cyrillic in cp1251, UTF-16, ...) is skipped, listed and named in
a note; anything else is UTF-8 (its lines that are not are skipped and counted). A compressed file
that ends early or is corrupt is used up to the damage (its last partial line dropped)
and named in a note.

Example:

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> _ = path.write_bytes(b"One.\\nTwo.\\n\\nThree.\\n\\nFour.\\n")
>>> [piece[2] for piece in file_pieces(path, "lines", 6, CorpusStats())]
[b'One.\\nTwo.\\n', b'\\nThree.\\n', b'\\nFour.\\n']
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import os
import re
import zlib
from pathlib import Path

from electra_tf.data.documents import CorpusStats

__all__ = [
    "Chunk",
    "CHUNK_BYTES",
    "classify",
    "is_compressed",
    "file_pieces",
    "assemble_chunks",
    "take_stats",
]

CHUNK_BYTES = 8 << 20  # uncompressed text per chunk: about 1.8 M tokens
HEAD_BYTES = 1 << 16
READ_BLOCK = 1 << 20
_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")
_MULTIBYTE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f\v\x1b")


@dataclasses.dataclass
class Chunk:
    """Pieces of input, each `(file name, encoding, data, start byte)`, and what reading found.

    `stats` holds what reading counted since the previous chunk (files, on-disk bytes,
    skipped files, notes); documents are counted where the chunk is turned into them.
    """

    index: int
    layout: str
    pieces: list
    field: str = "text"
    stats: CorpusStats = dataclasses.field(default_factory=CorpusStats)

    def where(self) -> str:
        """The chunk's input for a message: its first file and byte, and how many more files."""
        if not self.pieces:
            return f"the end of the input (chunk {self.index})"
        name, _, _, start = self.pieces[0]
        files = len({piece[0] for piece in self.pieces})
        more = f" and {files - 1} more file{'s' if files > 2 else ''}" if files > 1 else ""
        return f"{name} from byte {start:,}{more} (chunk {self.index})"


def classify(head: bytes) -> str:
    """What a file's first bytes say it is: 'binary', 'utf-8', 'cp1252' or 'unknown'.

    >>> classify(b"Caf\\xc3\\xa9"), classify(b"Caf\\xe9 au lait"), classify(b"\\x7fELF\\x00")
    ('utf-8', 'cp1252', 'binary')
    >>> classify("\u0422\u0435\u043a\u0441\u0442".encode("cp1251"))  # Cyrillic, not Western
    'unknown'
    """
    if b"\x00" in head or len(head.translate(None, _CONTROL)) < 0.9 * len(head):
        return "binary"
    try:
        head.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as error:
        if error.start >= len(head) - 3 and error.reason == "unexpected end of data":
            return "utf-8"  # a character cut by the end of the head
    if _MULTIBYTE.search(head):
        return "utf-8"  # UTF-8 with broken lines (skipped one by one)
    ascii_bytes = len(head) - len(head.translate(None, bytes(range(128))))
    return "cp1252" if ascii_bytes >= 0.7 * len(head) else "unknown"


def is_compressed(path, opener=None) -> bool:
    """Whether a file starts with the gzip or bzip2 magic bytes (`opener` as `file_pieces`')."""
    try:
        with open(path, "rb") if opener is None else opener(path)[0] as handle:
            magic = handle.read(3)
    except OSError:
        return False
    return magic[:2] == b"\x1f\x8b" or magic == b"BZh"


class _Reader:
    """A file read in blocks through its decompressor; `position` is the on-disk offset.

    `opener(path)` gives `(binary file, size on disk)` for other filesystems (None: `open`).
    """

    def __init__(self, path, opener=None):
        if opener is None:
            self.raw = open(path, "rb")
            self.size = os.fstat(self.raw.fileno()).st_size
        else:
            self.raw, self.size = opener(path)
        magic = self.raw.read(3)
        self.raw.seek(0)
        if magic[:2] == b"\x1f\x8b":
            self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb")
        elif magic == b"BZh":
            self.stream = bz2.BZ2File(self.raw)
        else:
            self.stream = self.raw
        self.damage = None
        self.reported = 0

    def read(self, size: int) -> bytes:
        """Up to `size` bytes, less only at the end or at damage (then `damage` says what).

        Read with `read1` (one read of the file each), so that damage loses only what
        comes after it, not the whole block.
        """
        blocks, got = [], 0
        while got < size and not self.damage:
            try:
                block = self.stream.read1(size - got)
            except (EOFError, OSError, zlib.error) as error:
                self.damage = str(error).split("\n")[0][:120] or type(error).__name__
                break
            if not block:
                break
            blocks.append(block)
            got += len(block)
        return b"".join(blocks)

    def consumed(self) -> int:
        """On-disk bytes read since the last call."""
        position = self.raw.tell()
        delta, self.reported = position - self.reported, position
        return delta

    def skip_to(self, offset: int) -> None:
        """Moves a plain file to `offset`; a compressed one stays (it is read from its start)."""
        if self.stream is self.raw:
            self.raw.seek(offset)

    def close(self) -> None:
        self.stream.close()
        self.raw.close()


def _boundary(buffer, target: int, layout: str) -> int | None:
    """The first document boundary at or after `target` in `buffer` (an offset), if any."""
    if layout == "lines":
        match = _BLANK_LINE.search(buffer, max(target - 1, 0))
        return match.start() + 1 if match else None
    end = buffer.find(b"\n", max(target - 1, 0))
    return end + 1 if end >= 0 else None


def _forced_cut(buffer, target: int) -> int:
    """Where to cut a buffer without a boundary: a line end, else a space, else a character."""
    end = buffer.find(b"\n", target - 1)
    if end >= 0:
        return end + 1
    space = buffer.rfind(b" ", target)
    if space >= 0:
        return space + 1
    cut = len(buffer) - 4
    while cut > target and buffer[cut] & 0xC0 == 0x80:
        cut -= 1  # not inside a UTF-8 character
    return cut


def _next_cut(buffer, target: int, layout: str, ended: bool, stats, name: str) -> int:
    if len(buffer) <= target:
        return len(buffer)
    cut = _boundary(buffer, target, layout)
    if cut is not None and cut <= 2 * target:
        return cut
    if ended and len(buffer) <= 2 * target:
        return len(buffer)
    what = "blank line" if layout == "lines" else "line end"
    stats.adjust(
        "documents_cut_at_chunks",
        f"{name} has no {what} for {2 * target:,} bytes; a document was cut there.",
    )
    return _forced_cut(buffer, target)


def file_pieces(path, layout: str, target: int, stats: CorpusStats, start: int = 0, opener=None):
    """`(file name, encoding, data, start byte)` pieces of one file, cut as the module says.

    Counts the file, its on-disk bytes and what is skipped or adjusted in `stats`.
    `start` (a sample's window) begins at the first boundary after that byte of a plain
    file; a compressed file is always read from its start. `opener(path)` gives
    `(binary file, size on disk)` for paths `open` cannot read (gs://, ...).
    """
    name = str(path)
    stats.files += 1
    try:
        reader = _Reader(Path(path) if opener is None else name, opener)
    except OSError:
        stats.skip("unreadable_files")
        stats.skipped_files.append(name)
        return
    try:
        yield from _cut_file(reader, name, layout, target, stats, start)
    finally:
        stats.input_bytes += reader.size - reader.reported
        reader.close()


def _skipped(head, encoding: str, name: str, stats: CorpusStats, damaged: bool) -> bool:
    """Counts a file that is empty, binary or in an unknown encoding (True), or notes cp1252."""
    if (head or damaged) and encoding in ("utf-8", "cp1252"):
        if encoding == "cp1252":
            stats.adjust(
                "files_read_as_cp1252", f"{name} is not UTF-8; it was read as Windows-1252."
            )
        return False
    stats.skip("empty_files" if not head else f"{encoding.replace('unknown', 'not_utf8')}_files")
    if head:
        stats.skipped_files.append(name)
    if encoding == "unknown":
        stats.note(f"{name} is neither UTF-8 nor Western (Windows-1252) text; convert it to UTF-8.")
    return True


def _cut_file(reader: _Reader, name: str, layout: str, target: int, stats, start: int):
    buffer = bytearray(reader.read(HEAD_BYTES))
    encoding = classify(bytes(buffer))
    if _skipped(buffer, encoding, name, stats, bool(reader.damage)):
        return
    if start > 0 and reader.stream is reader.raw:
        reader.skip_to(start)
        reader.reported = start
        buffer = bytearray(reader.read(2 * target))
        skip = _boundary(buffer, 1, layout) or len(buffer)
        del buffer[:skip]
        start += skip
    ended = False
    while buffer or not ended:
        while not ended and len(buffer) < 2 * target:
            block = reader.read(max(READ_BLOCK, 2 * target - len(buffer)))
            ended = not block
            buffer += block
        if ended and reader.damage and buffer:
            del buffer[buffer.rfind(b"\n") + 1 :]  # the partial last line
        cut = _next_cut(buffer, target, layout, ended, stats, name)
        if cut:
            stats.input_bytes += reader.consumed()
            yield name, encoding, bytes(buffer[:cut]), start
        del buffer[:cut]
        start += cut
    if reader.damage:
        stats.adjust(
            "truncated_files",
            f"{name} ends early ({reader.damage}); its first {start:,} bytes were used.",
        )


def assemble_chunks(streams, target: int):
    """Chunks of at least `target` bytes from `(layout, field, pieces, stats)` streams.

    Each stream is one source's pieces (a generator filling `stats` as it reads); a chunk
    never mixes two sources. A last chunk without pieces carries what reading counted
    after the last piece (skipped files, the rest of the on-disk bytes).
    """
    index = 0
    for layout, field, pieces, stats in streams:
        chunk, size = Chunk(index, layout, [], field), 0
        for piece in pieces:
            chunk.pieces.append(piece)
            size += len(piece[2])
            if size >= target:
                chunk.stats = take_stats(stats)
                yield chunk
                index += 1
                chunk, size = Chunk(index, layout, [], field), 0
        if chunk.pieces or stats != CorpusStats():
            chunk.stats = take_stats(stats)
            yield chunk
            index += 1


def take_stats(stats: CorpusStats) -> CorpusStats:
    """A copy of what `stats` counted; `stats` is emptied in place."""
    copy = CorpusStats()
    copy.merge(stats)
    for field in dataclasses.fields(CorpusStats):
        setattr(stats, field.name, getattr(CorpusStats(), field.name))
    return copy
