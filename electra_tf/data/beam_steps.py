"""The steps of `prepare` on Apache Beam: plain functions and callables, no Beam import.

`electra_tf.data.beam_prepare` wires these into a pipeline; each is a top-level function
or a small class whose instances pickle (Beam ships them to its workers), so they run
the same under any runner, and they can be called directly in tests:

- `CutFile`: one input file into its pieces (`chunks.file_pieces`), each keyed by
  (source, file, piece) with its size, and the file's `FileCut`: what reading counted
  before each piece, and after the last;
- `assign_chunks`: every file's `FileCut`, replayed in key order by `assemble_chunks`'s
  rule (consecutive pieces of one source until `target` bytes; a source never shares a
  chunk; a last chunk without pieces carries what was counted after its last piece),
  gives each piece its chunk's number and each chunk its stats, equal to a local run's;
- `build_chunk`: a chunk's pieces (grouped by its number) in key order, as a `Chunk`;
- `read_digests`, `decide_verdicts`: every chunk's document digests, then one `Ledger`
  over them in chunk order: the verdicts, and the chunk where `max_documents` was met;
- `PackChunk`: `ChunkWork` (built once per worker) packs a chunk by its verdict into
  shards named by the chunk's number, each written as `.tmp` and renamed, and its
  `ChunkResult` into `RESULTS/result-NNNNNN.pickle`; a retried or duplicated run of a
  chunk rewrites the same bytes under the same names;
- for an output on an object store (`electra_tf.data.beam_output`), where nothing is
  renamed: `PackRecords` packs a chunk without writing, `first_shards` numbers every
  chunk's first shard from all chunks' example counts, and `WriteShards` writes the
  chunk's shards under their final names (`pretrain-NNNNN.tfrecord`) and its result.

Results go through files in the output's scratch folder (which the driver and every
worker must see), or objects under the output's version prefix, so the driver reads
them back in chunk order, as many as there are.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
from pathlib import Path

from electra_tf.data.chunk_work import ChunkWork, describe_error, document_digest
from electra_tf.data.chunks import Chunk, file_pieces, take_stats
from electra_tf.data.documents import CorpusStats, chunk_documents
from electra_tf.data.remote_files import (
    beam_opener,
    delete_objects,
    is_remote,
    join,
    list_objects,
    write_object,
)
from electra_tf.data.shards import SHARD_PATTERN, tfrecord_bytes
from electra_tf.data.workers import Ledger

__all__ = [
    "RESULTS",
    "FileCut",
    "CutFile",
    "assign_chunks",
    "build_chunk",
    "read_digests",
    "decide_verdicts",
    "PackChunk",
    "PackRecords",
    "first_shards",
    "WriteShards",
    "write_atomically",
    "beam_opener",
]

#: The scratch folder's subfolder for what the pipeline hands back to the driver.
RESULTS = ".beam"


def write_atomically(path, data: bytes) -> None:
    """Writes `data` to `path` through `<path>.tmp` and a rename (a rerun writes it again);
    a remote `path` as one object."""
    if is_remote(str(path)):
        return write_object(str(path), data)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_bytes(data)
    os.replace(partial, path)


@dataclasses.dataclass
class FileCut:
    """One file's cut: per piece its size and what reading counted before it; then after."""

    source: int
    file: int
    pieces: list  # [(size, CorpusStats)]
    tail: CorpusStats


class CutFile:
    """`(source, file, path, layout)` -> `((source, file, piece), piece)`s, then its `FileCut`.

    The `FileCut` is yielded last, wrapped by `wrap` (Beam's tagged output); `opener`
    opens the file (None: the local `open`).
    """

    def __init__(self, target: int, opener=beam_opener, wrap=None):
        self.target, self.opener, self.wrap = target, opener, wrap

    def __call__(self, element):
        source, number, path, layout = element
        stats, sizes = CorpusStats(), []
        for piece in file_pieces(path, layout, self.target, stats, opener=self.opener):
            sizes.append((len(piece[2]), take_stats(stats)))
            yield (source, number, len(sizes) - 1), piece
        cut = FileCut(source, number, sizes, take_stats(stats))
        yield self.wrap(cut) if self.wrap else cut


def assign_chunks(cuts, sources: list, target: int):
    """`({(source, file, piece): chunk number}, [Chunk without pieces, with its stats]`).

    `cuts`: every file's `FileCut` (any order); `sources`: per source `(layout, field,
    files)`. The chunks are `assemble_chunks`'s for the same pieces, stats included.
    """
    by_key = {(cut.source, cut.file): cut for cut in cuts}
    numbers, chunks = {}, []
    for source, (layout, field, files) in enumerate(sources):
        stats, keys, size = CorpusStats(), [], 0
        for number in range(files):
            cut = by_key[source, number]
            for piece, (piece_size, before) in enumerate(cut.pieces):
                stats.merge(before)
                keys.append((source, number, piece))
                size += piece_size
                if size >= target:
                    chunks.append(Chunk(len(chunks), layout, [], field, take_stats(stats)))
                    numbers.update((key, len(chunks) - 1) for key in keys)
                    keys, size = [], 0
            stats.merge(cut.tail)
        if keys or stats != CorpusStats():
            chunks.append(Chunk(len(chunks), layout, [], field, take_stats(stats)))
            numbers.update((key, len(chunks) - 1) for key in keys)
    return numbers, chunks


def build_chunk(element) -> Chunk:
    """`(number, {"chunk": [Chunk], "pieces": [(key, piece)]})` -> the `Chunk` with its pieces."""
    _, grouped = element
    (chunk,) = grouped["chunk"]
    pieces = [piece for _, piece in sorted(grouped["pieces"], key=lambda kept: kept[0])]
    return dataclasses.replace(chunk, pieces=pieces)


def read_digests(chunk: Chunk, deduplicate: bool):
    """`(chunk number, its documents' digests)`, as `ChunkWork.read` gives them."""
    documents = chunk_documents(chunk, CorpusStats())
    if not deduplicate:
        return chunk.index, [None] * len(documents)
    return chunk.index, [document_digest(document) for document in documents]


def decide_verdicts(digests, deduplicate: bool, max_documents, folder: str) -> dict:
    """Every chunk's `Verdict` from one `Ledger` in chunk order (`{number: Verdict}`).

    Writes `RESULTS/ledger.json`: how many chunks there are and the last one read
    (`max_documents`), for the driver.
    """
    ledger, verdicts = Ledger(deduplicate, max_documents), {}
    for index, found in sorted(digests, key=lambda pair: pair[0]):
        verdicts.update(ledger.offer(index, found))
    summary = {"chunks": len(verdicts), "last_index": ledger.last_index}
    write_atomically(join(folder, RESULTS, "ledger.json"), json.dumps(summary).encode())
    if ledger.last_index is not None:
        verdicts = {i: v for i, v in verdicts.items() if i <= ledger.last_index}
    return verdicts


def _recorded(folder: str, index: int, where: str, work):
    """`work()`; a failure is written to `RESULTS/error-NNNNNN.json` (where, why), then raised."""
    try:
        return work()
    except Exception as error:
        is_io, reason = describe_error(error)
        failure = {"where": where, "reason": reason, "is_io": is_io}
        write_atomically(
            join(folder, RESULTS, f"error-{index:06d}.json"), json.dumps(failure).encode()
        )
        raise


def _finished(folder: str, result) -> None:
    """Writes a chunk's result for the driver (a retry that worked leaves its error file)."""
    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    write_atomically(join(folder, RESULTS, f"result-{result.index:06d}.pickle"), data)
    error = join(folder, RESULTS, f"error-{result.index:06d}.json")
    if not is_remote(folder):
        Path(error).unlink(missing_ok=True)
    else:
        delete_objects(list_objects(error))


class PackChunk:
    """A chunk and the verdicts -> its shards and `RESULTS/result-NNNNNN.pickle` (idempotent).

    Chunks past the verdicts (after `max_documents` was met) are not packed. A failure
    is written to `RESULTS/error-NNNNNN.json` (where, why) before it is raised, for the
    driver's message; the runner may retry the chunk. `vocabulary`: the tokens, when
    the workers cannot read `settings.vocab_file`.
    """

    def __init__(self, settings, vocabulary=None):
        self.settings, self.vocabulary, self.work = settings, vocabulary, None

    def __getstate__(self):
        return {**self.__dict__, "work": None}  # the tokenizer is built per worker

    def _pack(self, chunk: Chunk, verdict, write: bool = True):
        if self.work is None:
            os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
            os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
            self.work = ChunkWork(self.settings, self.vocabulary)
        self.work.read(chunk)
        self.work.tokenize()
        return self.work.finish(verdict, write)

    def __call__(self, chunk: Chunk, verdicts: dict) -> None:
        if chunk.index not in verdicts:
            return
        folder = self.settings.folder
        result = _recorded(
            folder, chunk.index, chunk.where(), lambda: self._pack(chunk, verdicts[chunk.index])
        )
        _finished(folder, result)


class PackRecords(PackChunk):
    """A chunk and the verdicts -> `[(number, where, ChunkResult, records)]` (none past the
    verdicts), nothing written: on an object store a shard's final name needs every
    earlier chunk's example count."""

    def __call__(self, chunk: Chunk, verdicts: dict) -> list:
        if chunk.index not in verdicts:
            return []
        verdict = verdicts[chunk.index]
        pack = lambda: self._pack(chunk, verdict, write=False)  # noqa: E731
        result = _recorded(self.settings.folder, chunk.index, chunk.where(), pack)
        records, self.work.records = self.work.records, None
        return [(chunk.index, chunk.where(), result, records)]


def first_shards(counts, examples_per_shard: int) -> dict:
    """`{chunk number: its first shard's number}` from `(number, examples)` of every chunk:
    each chunk starts a shard, as `ShardWriter` does.

    >>> first_shards([(1, 0), (0, 7), (2, 3)], 3)
    {0: 0, 1: 3, 2: 3}
    """
    first, total = {}, 0
    for index, examples in sorted(counts):
        first[index] = total
        total += -(-examples // examples_per_shard)
    return first


def packed_examples(packed) -> tuple:
    """`(number, examples)` of `PackRecords`' output."""
    return packed[0], len(packed[3])


class WriteShards:
    """`PackRecords`' output and `first_shards` -> the chunk's shards under their final
    names, each written whole (`tfrecord_bytes`) through `FileSystems`, and its result
    (its `shards` the final names); a rerun writes the same objects again."""

    def __init__(self, settings):
        self.settings = settings

    def __call__(self, packed, first: dict) -> None:
        index, where, result, records = packed
        folder, size = self.settings.folder, self.settings.examples_per_shard

        def write():
            shards = []
            for start in range(0, len(records), size):
                name = SHARD_PATTERN.format(first[index] + len(shards))
                write_atomically(join(folder, name), tfrecord_bytes(records[start : start + size]))
                shards.append((name, len(records[start : start + size])))
            return shards

        result.shards = _recorded(folder, index, where, write)
        _finished(folder, result)
