"""One chunk of a corpus into packed examples in shard files: what a prepare worker does.

`ChunkWork` works in three steps, so that duplicate documents can be dropped across
chunks handled at the same time by different processes:

1. `read(chunk)`: the chunk's documents, and a digest of each;
2. `tokenize()`: every sentence, in the graph (`ElectraTokenizer`);
3. `finish(verdict)`: packs the documents the verdict keeps (`ExampleBuilder`, seeded
   by the seed and the chunk's number) and writes them to the chunk's own shards.

`prepare` runs these steps in its own process (one worker) or in spawned worker
processes (`worker_main`), the same code either way; only the order in which chunks
finish differs, and `prepare` joins their shards in chunk order.
"""

from __future__ import annotations

import collections
import ctypes
import dataclasses
import gc
import hashlib
import os
import signal
import time

import numpy as np

from electra_tf.data.documents import CorpusStats, chunk_documents
from electra_tf.data.packing import ExampleBuilder
from electra_tf.data.shards import ShardWriter, serialize_examples
from electra_tf.startup import start_process

__all__ = [
    "ChunkSettings",
    "Verdict",
    "ChunkResult",
    "ChunkWork",
    "chunk_seed",
    "document_digest",
    "SegmentBuilder",
    "example_rows",
    "describe_error",
    "worker_main",
]

TOKENIZE_BATCH = 8192  # sentences per tokenizer call


@dataclasses.dataclass(frozen=True)
class ChunkSettings:
    """What every worker needs: where to write, the vocabulary, the packing."""

    folder: str
    vocab_file: str
    lower_case: bool
    strip_accents: bool
    sequence_length: int
    seed: int
    examples_per_shard: int
    deduplicate: bool


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Of a chunk's documents, the first `counted` are read (`max_documents`) and packed,
    except those numbered in `dropped` (they repeat an earlier document)."""

    counted: int
    dropped: frozenset = frozenset()


@dataclasses.dataclass
class ChunkResult:
    """What one chunk gave: its shards (in order), examples, tokens written (padding aside),
    unigram counts and stats; the tokens its packed documents had before packing cut any
    (`tokenized`), and the worker's wall and CPU seconds on it."""

    index: int
    shards: list
    examples: int
    tokens: int
    unigram: np.ndarray
    stats: CorpusStats
    tokenized: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def chunk_seed(seed: int, index: int) -> int:
    """The packing seed of chunk `index`: `seed` itself for the first chunk.

    >>> chunk_seed(12345, 0), chunk_seed(12345, 1) == chunk_seed(12345, 1) != 12345
    (12345, True)
    """
    if index == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}/{index}".encode()).digest()[:8], "big")


def document_digest(document) -> bytes:
    """A document's 16-byte BLAKE2b digest (its sentences joined by newlines)."""
    return hashlib.blake2b("\n".join(document).encode("utf-8"), digest_size=16).digest()


class ChunkWork:
    """Turns chunks into shards (see the module docstring); one tokenizer for all chunks."""

    def __init__(self, settings: ChunkSettings, vocabulary=None):
        """`vocabulary`: the tokens, given instead of reading `settings.vocab_file`."""
        import tensorflow as tf

        from electra_tf.data.tokenizer import ElectraTokenizer

        self.settings, self.records = settings, None
        tokenizer = ElectraTokenizer(
            None if vocabulary else settings.vocab_file,
            lower_case=settings.lower_case,
            strip_accents=settings.strip_accents,
            vocabulary=vocabulary or None,
        )
        self.special_ids = tokenizer.special_ids
        self.vocabulary_size = tokenizer.vocabulary_size
        signature = [tf.TensorSpec([None], tf.string)]
        self._tf = tf
        self._tokenize = tf.function(tokenizer.tokenize, input_signature=signature, autograph=False)
        self._tokenize(tf.constant(["warm up"]))  # traced here, not in the first chunk

    def read(self, chunk) -> list:
        """The chunk's documents (kept for the next steps); returns their digests."""
        self.clock = (time.perf_counter(), time.process_time())
        self.chunk, self.stats = chunk, CorpusStats()
        self.stats.merge(chunk.stats)
        self.documents = chunk_documents(chunk, self.stats)
        if not self.settings.deduplicate:
            return [None] * len(self.documents)
        return [document_digest(document) for document in self.documents]

    def tokenize(self) -> None:
        """Every sentence's ids: `self.flat` (a list) and `self.splits` (sentence k's start)."""
        sentences = [s for document in self.documents for s in document]
        flat, splits = [], [0]
        for start in range(0, len(sentences), TOKENIZE_BATCH):
            ragged = self._tokenize(self._tf.constant(sentences[start : start + TOKENIZE_BATCH]))
            flat.append(ragged.flat_values.numpy())
            splits.extend((ragged.row_splits.numpy()[1:] + splits[-1]).tolist())
        self.flat = np.concatenate(flat).tolist() if flat else []
        self.splits = splits

    def finish(self, verdict: Verdict, write: bool = True) -> ChunkResult:
        """Packs the documents `verdict` keeps and writes them to this chunk's shards
        (`write=False`: leaves the serialized records in `self.records`, no shards)."""
        counted = self.documents[: verdict.counted]
        self.stats.documents += len(counted)
        self.stats.sentences += sum(len(d) for d in counted)
        self.stats.characters += sum(len(s) for d in counted for s in d)
        if verdict.dropped:
            self.stats.skip("duplicate_documents", len(verdict.dropped))
        examples, tokenized = self._pack(verdict)
        result = self._write(examples, write)
        result.tokenized = tokenized
        result.seconds = time.perf_counter() - self.clock[0]
        result.cpu_seconds = time.process_time() - self.clock[1]
        self.documents = self.flat = self.splits = None
        return result

    def _pack(self, verdict: Verdict) -> list:
        ids, settings = self.special_ids, self.settings
        builder = SegmentBuilder(
            settings.sequence_length,
            ids["cls"],
            ids["sep"],
            seed=chunk_seed(settings.seed, self.chunk.index),
            pad_id=ids["pad"],
        )
        examples, sentence, flat, splits, tokenized = [], 0, self.flat, self.splits, 0
        for number, document in enumerate(self.documents):
            if number < verdict.counted and number not in verdict.dropped:
                for k in range(sentence, sentence + len(document)):
                    examples.append(builder.add_sentence(flat[splits[k] : splits[k + 1]]))
                examples.append(builder.end_document())
                tokenized += splits[sentence + len(document)] - splits[sentence]
            sentence += len(document)
        return [example for example in examples if example is not None], tokenized

    def _write(self, examples: list, write: bool = True) -> ChunkResult:
        settings, index, special = self.settings, self.chunk.index, self.special_ids
        ids, mask, segments = example_rows(
            examples, settings.sequence_length, special["cls"], special["sep"], special["pad"]
        )
        records, shards = serialize_examples(ids, mask, segments), []
        if write:
            pattern = f"chunk-{index:06d}-{{:04d}}.tfrecord"
            writer = ShardWriter(settings.folder, settings.examples_per_shard, pattern)
            for record in records:
                writer.write(record)
            shards = writer.close()
        else:
            self.records = records
        real = ids[mask.astype(bool)]
        unigram = np.bincount(real, minlength=self.vocabulary_size).astype(np.int64)
        return ChunkResult(index, shards, len(ids), int(real.size), unigram, self.stats)


class SegmentBuilder(ExampleBuilder):
    """`ExampleBuilder` whose examples are its `(first, second)` segments, unpadded:
    `example_rows` makes the three rows of many at once."""

    def _make_example(self, first, second):
        return first, second


def example_rows(examples, length: int, cls_id: int, sep_id: int, pad_id: int = 0):
    """`[examples, length]` ids, mask and segment ids of `(first, second)` segment pairs,
    laid out as `ExampleBuilder` lays out one: `[CLS] A [SEP] B [SEP]`, padded.

    >>> ids, mask, segments = example_rows([([7, 8], [9]), ([7], [])], 6, cls_id=2, sep_id=3)
    >>> ids.tolist()
    [[2, 7, 8, 3, 9, 3], [2, 7, 3, 0, 0, 0]]
    >>> mask.tolist(), segments.tolist()
    ([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]], [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])
    """
    count = len(examples)
    ids = np.full((count, length), pad_id, np.int64)
    firsts = np.fromiter((len(first) for first, _ in examples), np.int64, count)
    seconds = np.fromiter((len(second) for _, second in examples), np.int64, count)
    for row, (first, second) in enumerate(examples):
        values = [cls_id, *first, sep_id, *second, sep_id] if second else [cls_id, *first, sep_id]
        ids[row, : len(values)] = values
    ends = firsts + 2 + np.where(seconds > 0, seconds + 1, 0)
    position = np.arange(length)
    mask = (position < ends[:, None]).astype(np.int64)
    segments = ((position >= firsts[:, None] + 2) & (position < ends[:, None])).astype(np.int64)
    return ids, mask, segments


def describe_error(error: BaseException) -> tuple[bool, str]:
    """(whether it is a failed read or write, its reason in a few words)."""
    reason = getattr(error, "strerror", None) or getattr(error, "message", None)
    is_io = isinstance(error, OSError) or type(error).__module__.startswith("tensorflow")
    if is_io and reason:
        return True, str(reason).strip().splitlines()[0][:200]
    text = str(error).strip().splitlines()
    return False, f"{type(error).__name__}: {text[0][:200] if text else 'no message'}"


def _end_with_parent() -> None:
    """Asks Linux to kill this process when its parent dies (a killed prepare)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (AttributeError, OSError):
        pass


class _Stop(Exception):
    pass


def worker_main(connection, settings: ChunkSettings, parent: int) -> None:
    """A worker process: `ChunkWork` over the chunks the parent sends, one at a time.

    Messages in: ("chunk", index, Chunk), ("verdict", index, Verdict), ("stop", ...).
    Out: ("ready", None, pid), ("digests", index, list), ("done", index, ChunkResult),
    ("error", index or None, (is_io, reason)). A failure ends the worker.
    """
    _end_with_parent()
    if os.getppid() != parent:
        return
    start_process()  # a process of its own, as `electra-tf` commands start
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    pending = collections.deque()

    def receive(kind, index=None):
        for message in list(pending):
            if message[0] == kind and index in (None, message[1]):
                pending.remove(message)
                return message
        while True:
            message = connection.recv()
            if message[0] == "stop":
                raise _Stop
            if message[0] == kind and index in (None, message[1]):
                return message
            pending.append(message)

    index = None
    try:
        work = ChunkWork(settings)
        connection.send(("ready", None, os.getpid()))
        while True:
            _, index, chunk = receive("chunk")
            connection.send(("digests", index, work.read(chunk)))
            work.tokenize()
            connection.send(("done", index, work.finish(receive("verdict", index)[2])))
    except (_Stop, EOFError, BrokenPipeError, KeyboardInterrupt):
        return
    except Exception as error:  # noqa: BLE001 - reported to the parent, which names the chunk
        connection.send(("error", index, describe_error(error)))
    finally:  # the process ends next: its exit skips the collector's walk (cli.command)
        gc.freeze()
