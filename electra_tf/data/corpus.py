"""Corpus readers: text files and folders, JSONL, TFDS; documents as lists of sentences.

Every source gives its input as a stream of pieces cut at document boundaries
(`electra_tf.data.chunks`); `read_documents` turns them into documents, each a list
of sentences (strings), by the layout (`electra_tf.data.documents`). Input is
checked up front where it can be (a missing path, a folder with no text, an
unknown TFDS name: one sentence each); what can only be found while reading
(a line that is not UTF-8, an empty or binary file, a truncated archive, a line
too long to be one sentence, a JSON line without the field) is skipped or adjusted
and counted in `CorpusStats`, never fatal.

Text layouts:

- "lines": one sentence per line, blank lines between documents (the
  reference code's convention; a file boundary also ends a document);
- "files": one document per file; its text is split into sentences.

`.gz` and `.bz2` files are read transparently. Inputs with a scheme (gs://, s3://, ...;
globs too) are read through Apache Beam's filesystems when a source is made with
`remote=True` (`electra_tf.data.remote_files`; `prepare --runner beam`), else refused.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path, PurePosixPath

from electra_tf.data.chunks import CHUNK_BYTES, assemble_chunks, file_pieces, is_compressed
from electra_tf.data.documents import (
    MAX_LINE_CHARS,
    CorpusError,
    CorpusStats,
    chunk_documents,
)
from electra_tf.data.remote_files import is_remote, list_remote, opener_for, refusal
from electra_tf.data.sentences import split_sentences

__all__ = [
    "CorpusError",
    "CorpusStats",
    "MAX_LINE_CHARS",
    "TextSource",
    "JsonlSource",
    "TfdsSource",
    "split_sentences",
    "read_documents",
    "corpus_chunks",
    "sample_documents",
    "input_bytes",
    "corpus_sources",
]

TEXT_SUFFIXES = (".txt", ".text", ".md", ".rst", ".jsonl", ".json", ".raw", ".tokens", "")


def _outside(files, folders) -> list:
    """The files that are not inside any of `folders` (a remote folder: under its prefix)."""
    prefixes = tuple(str(f).rstrip("/") + "/" for f in folders if is_remote(str(f)))
    folders = [Path(f).resolve() for f in folders if not is_remote(str(f))]
    return [
        f
        for f in files
        if not (
            f.startswith(prefixes)
            if is_remote(f)
            else any(Path(f).resolve().is_relative_to(d) for d in folders)
        )
    ]


def _is_text(relative: PurePosixPath) -> bool:
    """Whether a folder's file (its path inside the folder) is read: not hidden, a text suffix."""
    return not any(part.startswith(".") for part in relative.parts) and (
        relative.suffix.lower().removesuffix(".gz") in TEXT_SUFFIXES + (".gz", ".bz2")
    )


def _remote_files(spec: str, what: str, sizes: dict) -> list[str]:
    """The files a remote `spec` names (`remote_files.list_remote`); their sizes into `sizes`."""
    folder, found = list_remote(spec)
    if folder is None and not found:
        raise CorpusError(f"Input {spec} matches no files; check the path or pattern.")
    if folder is not None:
        if not found:
            raise CorpusError(f"Input path {spec} does not exist.")
        found = [(p, size) for p, size in found if _is_text(PurePosixPath(p[len(folder) :]))]
        if not found:
            raise CorpusError(
                f"Folder {spec} holds no text files ({what}); point --input at the files."
            )
    sizes.update(found)
    return [path for path, _ in found]


def _text_files(paths, what: str, sizes: dict | None = None) -> list:
    """The files `paths` name, in order (a folder's sorted); remote ones only given `sizes`."""
    files = []
    for spec in paths:
        if is_remote(spec):
            if sizes is None:
                raise refusal(spec)
            files.extend(_remote_files(spec, what, sizes))
            continue
        path = Path(spec)
        if not path.exists():
            raise CorpusError(f"Input path {path} does not exist.")
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and _is_text(p.relative_to(path))
            )
            if not found:
                raise CorpusError(
                    f"Folder {path} holds no text files ({what}); point --input at the files."
                )
            files.extend(found)
        else:
            files.append(path)
    return files


class _FileSource:
    """What text and JSONL sources share: their files, cut into pieces by their layout.

    `files` holds `Path`s (local) and strings with a scheme (remote, read through Beam;
    their sizes, listed with them, in `sizes`).
    """

    layout = "lines"
    field = "text"

    def _list(self, what: str) -> None:
        self.sizes: dict = {}
        self.files = _text_files(self.paths, what, self.sizes if self.remote else None)

    def exclude(self, folders) -> None:
        """Leaves out the files inside `folders` (a prepare's own output, say)."""
        self.files = _outside(self.files, folders)

    def file_size(self, path) -> int:
        """A file's size on disk (a remote one's as listed)."""
        return self.sizes[path] if path in self.sizes else os.path.getsize(path)

    def input_bytes(self) -> int:
        """The files' size on disk."""
        return sum(self.file_size(f) for f in self.files if f in self.sizes or os.path.exists(f))

    def stream(self, target: int = CHUNK_BYTES):
        """`(layout, field, pieces, stats)`: the files' pieces, read lazily (`assemble_chunks`)."""
        stats = CorpusStats()
        pieces = (
            p
            for f in self.files
            for p in file_pieces(f, self.layout, target, stats, opener=opener_for(f))
        )
        return self.layout, self.field, pieces, stats

    def sample(self, budget: int, windows: int):
        """A `stream` of about `budget` bytes from `windows` places spread over the files.

        A window in a plain file starts at the first boundary after its offset; windows
        in a compressed file are read together from its start.
        """
        sizes = [self.file_size(f) for f in self.files]
        total, width = sum(sizes), max(budget // windows, 1)
        if total <= budget:
            return self.stream()
        plan: dict[tuple[int, int], int] = {}
        ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]
        for window in range(windows):
            offset = window * total // windows
            index = next(i for i, end in enumerate(ends) if end > offset)
            local = offset - (ends[index] - sizes[index])
            path = self.files[index]
            key = (index, 0 if is_compressed(path, opener_for(path)) else local)
            plan[key] = plan.get(key, 0) + width
        stats = CorpusStats()
        pieces = (p for key, wanted in plan.items() for p in self._window(*key, wanted, stats))
        return self.layout, self.field, pieces, stats

    def _window(self, index: int, start: int, wanted: int, stats):
        for path in self.files[index:]:
            target, opener = min(wanted, CHUNK_BYTES), opener_for(path)
            for piece in file_pieces(path, self.layout, target, stats, start, opener):
                yield piece
                wanted -= len(piece[2])
                if wanted <= 0:
                    return
            start = 0


@dataclasses.dataclass
class TextSource(_FileSource):
    """Plain text files or folders (recursively), in the "lines" or "files" layout.

    `remote`: also read paths with a scheme (through Beam), else refuse them.
    """

    paths: list
    layout: str = "lines"
    remote: bool = False

    def __post_init__(self):
        if self.layout not in ("lines", "files"):
            raise CorpusError(f"Unknown text layout {self.layout!r}: use 'lines' or 'files'.")
        self._list("*.txt, *.gz, *.bz2 or files without a suffix")


@dataclasses.dataclass
class JsonlSource(_FileSource):
    """JSON Lines files: one object per line, the document text under `field` (`remote`:
    as `TextSource`'s)."""

    paths: list
    field: str = "text"
    remote: bool = False
    layout = "jsonl"

    def __post_init__(self):
        self._list("*.jsonl")


@dataclasses.dataclass
class TfdsSource:
    """A TensorFlow Datasets dataset: name (or prepared folder), split, text feature."""

    name: str
    split: str = "train"
    feature: str = "text"
    data_dir: str | None = None
    download: bool = True

    def __post_init__(self):
        import tensorflow_datasets as tfds

        try:
            if os.path.isdir(self.name):
                self.builder = tfds.builder_from_directory(self.name)
            else:
                self.builder = tfds.builder(self.name, data_dir=self.data_dir)
        except Exception as error:  # noqa: BLE001 - TFDS raises several kinds here
            raise CorpusError(
                f"TFDS dataset {self.name!r} cannot be loaded ({type(error).__name__}: "
                f"{str(error).splitlines()[0][:200]}); check the name and version."
            ) from None
        features = getattr(self.builder.info, "features", None)
        if features is not None and self.feature not in features:
            raise CorpusError(
                f"TFDS dataset {self.name!r} has no feature {self.feature!r} "
                f"(features: {', '.join(features)}); pass --tfds-feature."
            )
        splits = self.builder.info.splits
        if splits and self.split.split("[")[0] not in splits:
            raise CorpusError(
                f"TFDS dataset {self.name!r} has no split {self.split!r} "
                f"(splits: {', '.join(splits)})."
            )

    def input_bytes(self) -> int | None:
        """Unknown before reading (None)."""
        return None

    def stream(self, target: int = CHUNK_BYTES):
        """`(layout, field, pieces, stats)`: each record's text is one piece ("texts")."""
        stats = CorpusStats()
        return "texts", self.feature, self._records(stats), stats

    def sample(self, budget: int, windows: int):
        """The first records, about `budget` characters of them."""
        layout, field, pieces, stats = self.stream()

        def first():
            taken = 0
            for piece in pieces:
                yield piece
                taken += len(piece[2])
                if taken >= budget:
                    return

        return layout, field, first(), stats

    def _records(self, stats: CorpusStats):
        if self.download and not self._prepared():
            self.builder.download_and_prepare()
        dataset = self.builder.as_dataset(split=self.split, shuffle_files=False)
        stats.files += 1
        for number, example in enumerate(dataset.as_numpy_iterator()):
            value = example[self.feature]
            try:
                text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
            except UnicodeDecodeError:
                stats.skip("records_not_utf8")
                continue
            yield self.name, "utf-8", text, number

    def _prepared(self) -> bool:
        return os.path.exists(os.path.join(self.builder.data_dir, "dataset_info.json"))


def corpus_chunks(sources, target: int = CHUNK_BYTES):
    """The sources' input as `Chunk`s of at least `target` bytes, in order."""
    return assemble_chunks((source.stream(target) for source in sources), target)


def input_bytes(sources) -> int | None:
    """The input's size on disk (compressed files as they are), or None when unknown."""
    sizes = [source.input_bytes() for source in sources]
    return None if None in sizes else sum(sizes)


def _documents(chunks, stats: CorpusStats, max_documents: int | None):
    for chunk in chunks:
        stats.merge(chunk.stats)
        for document in chunk_documents(chunk, stats):
            stats.documents += 1
            stats.sentences += len(document)
            stats.characters += sum(len(s) for s in document)
            yield document
            if max_documents is not None and stats.documents >= max_documents:
                return


def read_documents(sources, stats: CorpusStats, max_documents: int | None = None):
    """Documents from every source in order; `stats` counts what was read and skipped."""
    yield from _documents(corpus_chunks(sources), stats, max_documents)


def sample_documents(sources, stats: CorpusStats, budget: int, windows: int = 64):
    """Documents from about `budget` bytes of the input, in `windows` places spread evenly.

    The whole input when it is no larger; reading time does not grow with the input.
    """
    budgets = [budget // len(sources)] * len(sources)
    streams = (s.sample(b, windows) for s, b in zip(sources, budgets, strict=True))
    yield from _documents(assemble_chunks(streams, CHUNK_BYTES), stats, None)


def corpus_sources(
    inputs=(),
    *,
    layout: str = "lines",
    jsonl_field: str | None = None,
    tfds: str | None = None,
    tfds_split: str = "train",
    tfds_feature: str = "text",
    tfds_data_dir: str | None = None,
    download: bool = True,
    remote: bool = False,
) -> list:
    """The sources `electra-tf prepare` reads, checked up front.

    Args:
        inputs: text or JSONL files and folders. With `jsonl_field` all are read as
            JSON Lines under that field; otherwise `.jsonl` files (also `.gz`, `.bz2`)
            are JSON Lines with a `text` field and the rest text in `layout`.
        layout: "lines" or "files" (see the module docstring).
        tfds, tfds_split, tfds_feature, tfds_data_dir, download: a TFDS dataset to read.
        remote: also read inputs on any filesystem Apache Beam knows (gs://, s3://, globs:
            `electra_tf.data.remote_files`), as `prepare --runner beam` does; else they
            are refused in one sentence.
    """
    sources = []
    inputs = list(inputs)
    if inputs:
        if jsonl_field:
            sources.append(JsonlSource(inputs, field=jsonl_field, remote=remote))
        else:
            jsonl = [p for p in inputs if str(p).endswith((".jsonl", ".jsonl.gz", ".jsonl.bz2"))]
            text = [p for p in inputs if p not in jsonl]
            if jsonl:
                sources.append(JsonlSource(jsonl, remote=remote))
            if text:
                sources.append(TextSource(text, layout=layout, remote=remote))
    if tfds:
        sources.append(
            TfdsSource(
                tfds,
                split=tfds_split,
                feature=tfds_feature,
                data_dir=tfds_data_dir,
                download=download,
            )
        )
    if not sources:
        raise CorpusError("Nothing to read: pass --input PATH (repeatable) or --tfds NAME.")
    return sources
