"""From a corpus to a data folder: vocabulary, packed TFRecord shards and a manifest.

`prepare_corpus(sources, output_dir, ...)` is what `electra-tf prepare` runs:

1. the vocabulary: a given vocab.txt (checked), or one learned from the corpus
   with tensorflow-text's WordPiece learner;
2. documents are read (one whose text repeats an earlier one exactly is dropped
   and counted), split into sentences, tokenized in the graph
   (`ElectraTokenizer`) and packed as the reference builder does (`ExampleBuilder`);
3. examples are written in order into shards of `examples_per_shard`;
4. `manifest.json` lists the shards with their example counts, the
   vocabulary and its special ids; `unigram_counts.npy` holds token
   frequencies (for the unigram-generator ablation); `prepare_report.json`
   holds what was read and skipped, and the timing.

Everything is written into a hidden scratch folder beside the output and moved into
place only when shards, vocabulary, counts, manifest and report are complete, so an
interrupted or failed run leaves the previous output exactly as it was; the output
folder (and the scratch) is never read as input. What is written is a deterministic
function of the input and the seed: re-running on the same input gives byte-identical
shards.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf.data.corpus import CorpusError, CorpusStats, read_documents
from electra_tf.data.packing import ExampleBuilder
from electra_tf.data.tfrecords import Manifest, serialize_example
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import (
    learn_vocabulary,
    read_vocabulary,
    special_ids,
    write_vocabulary,
)

__all__ = ["PrepareResult", "prepare_corpus", "ShardWriter", "UNIGRAM_FILE"]

UNIGRAM_FILE = "unigram_counts.npy"
SHARD_PATTERN = "pretrain-{:05d}.tfrecord"


@dataclasses.dataclass
class PrepareResult:
    manifest: Manifest
    stats: CorpusStats
    examples: int
    tokens: int
    seconds: float


class ShardWriter:
    """Writes serialized examples into consecutive shards of a fixed size.

    A shard is written as `<name>.tmp` and renamed when it is full (or at
    `close`), so only complete shards carry final names.
    """

    def __init__(self, folder, examples_per_shard: int):
        self.folder = Path(folder)
        self.per_shard = examples_per_shard
        self.shards: list[tuple[str, int]] = []
        self._writer = None
        self._name = None
        self._count = 0

    def write(self, serialized: bytes) -> None:
        if self._writer is None:
            self._name = SHARD_PATTERN.format(len(self.shards))
            self._writer = tf.io.TFRecordWriter(str(self.folder / (self._name + ".tmp")))
            self._count = 0
        self._writer.write(serialized)
        self._count += 1
        if self._count == self.per_shard:
            self._finish_shard()

    def _finish_shard(self) -> None:
        self._writer.close()
        os.replace(self.folder / (self._name + ".tmp"), self.folder / self._name)
        self.shards.append((self._name, self._count))
        self._writer = None

    def close(self) -> list[tuple[str, int]]:
        if self._writer is not None:
            self._finish_shard()
        return self.shards


def _progress(enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(unit=" docs", desc="prepare", dynamic_ncols=True, mininterval=0.5)


def _vocabulary(
    sources,
    output_dir: Path,
    vocab_file,
    vocabulary_size,
    lower_case,
    strip_accents,
    vocab_sentences,
    max_documents,
) -> list[str]:
    target = output_dir / "vocab.txt"
    if vocab_file:
        tokens = read_vocabulary(vocab_file)
        if Path(vocab_file).resolve() != target.resolve():
            write_vocabulary(tokens, target)
        return tokens
    stats = CorpusStats()

    def sentences():
        count = 0
        for document in read_documents(sources, stats, max_documents):
            for sentence in document:
                yield sentence
                count += 1
                if count >= vocab_sentences:
                    return

    stream = sentences()
    first = next(stream, None)
    nothing = (
        "No usable text to learn a vocabulary from "
        f"(read {stats.files} files, skipped {dict(stats.skipped) or 'nothing'})."
    )
    if first is None:
        raise CorpusError(nothing)
    try:
        tokens = learn_vocabulary(
            itertools.chain([first], stream), vocabulary_size, lower_case, strip_accents
        )
    except (StopIteration, RuntimeError, ValueError):  # the learner found no word to count
        raise CorpusError(nothing) from None
    if len(tokens) <= 5:
        raise CorpusError(nothing)
    write_vocabulary(tokens, target)
    return tokens


def prepare_corpus(
    sources,
    output_dir,
    *,
    vocab_file=None,
    vocabulary_size: int = 8192,
    lower_case: bool = True,
    strip_accents: bool | None = None,
    sequence_length: int = 128,
    seed: int = 12345,
    examples_per_shard: int = 10_000,
    max_documents: int | None = None,
    vocab_sentences: int = 1_000_000,
    progress: bool = True,
    deduplicate: bool = True,
) -> PrepareResult:
    """Writes a data folder for `electra-tf pretrain` (see the module docstring).

    Args:
        sources: corpus sources (`TextSource`, `JsonlSource`, `TfdsSource`), already
            checked (their constructors fail on missing paths or names).
        output_dir: the data folder to write.
        vocab_file: an existing vocab.txt; None learns one of `vocabulary_size`.
        lower_case, strip_accents: text normalization (uncased BERT: both on).
        sequence_length: the packed example length.
        seed: the packing seed.
        examples_per_shard: shard size.
        max_documents: read at most this many documents.
        vocab_sentences: sentences used to learn a vocabulary.
        progress: show a progress bar.
        deduplicate: drop documents whose text repeats an earlier one exactly (counted
            as `duplicate_documents` in the report's skipped counts), so a held-out shard
            never shares a document with the training shards.

    Returns:
        `PrepareResult`.

    Raises:
        CorpusError: no usable text, an output folder holding other files, or a write
            that failed (disk full, read-only); the previous output is left as it was.
    """
    started = time.perf_counter()
    output_dir = Path(output_dir)
    _check_replaceable(output_dir)
    scratch = output_dir.with_name(f".{output_dir.name}.prepare-tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    for source in sources:  # the output is never read as input
        if hasattr(source, "exclude"):
            source.exclude(
                [output_dir, scratch, output_dir.with_name(f".{output_dir.name}.prepare-old")]
            )
    try:
        scratch.mkdir(parents=True)
        result = _prepare_into(
            scratch,
            sources,
            vocab_file=vocab_file,
            vocabulary_size=vocabulary_size,
            lower_case=lower_case,
            strip_accents=strip_accents,
            sequence_length=sequence_length,
            seed=seed,
            examples_per_shard=examples_per_shard,
            max_documents=max_documents,
            vocab_sentences=vocab_sentences,
            progress=progress,
            deduplicate=deduplicate,
        )
    except (OSError, tf.errors.OpError) as error:
        shutil.rmtree(scratch, ignore_errors=True)
        reason = getattr(error, "strerror", None) or getattr(error, "message", None) or error
        kept = "the previous output is unchanged" if output_dir.exists() else "nothing was kept"
        raise CorpusError(
            f"Could not write the data folder {output_dir} ({reason}); free space or choose a "
            f"writable --output-dir ({kept})."
        ) from None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    _swap_into_place(scratch, output_dir)
    manifest = dataclasses.replace(result.manifest, folder=str(output_dir))
    return dataclasses.replace(result, manifest=manifest, seconds=time.perf_counter() - started)


#: What a prepare folder holds; a folder with anything else is not replaced.
_OUTPUT_NAMES = ("manifest.json", "vocab.txt", UNIGRAM_FILE, "prepare_report.json")


def _check_replaceable(output_dir: Path) -> None:
    if not output_dir.exists():
        return
    if not output_dir.is_dir():
        raise CorpusError(f"--output-dir {output_dir} is a file; choose a folder.")
    foreign = sorted(
        p.name
        for p in output_dir.iterdir()
        if p.name not in _OUTPUT_NAMES
        and not (p.name.startswith("pretrain-") and ".tfrecord" in p.name)
        and not p.name.endswith(".tmp")
    )
    if foreign:
        raise CorpusError(
            f"{output_dir} holds files prepare did not write ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}); choose an empty or new --output-dir."
        )


def _swap_into_place(scratch: Path, output_dir: Path) -> None:
    """Moves the finished `scratch` to `output_dir`, replacing a previous output."""
    old = output_dir.with_name(f".{output_dir.name}.prepare-old")
    shutil.rmtree(old, ignore_errors=True)
    if output_dir.exists():
        os.replace(output_dir, old)
    os.replace(scratch, output_dir)
    shutil.rmtree(old, ignore_errors=True)


def _prepare_into(
    output_dir: Path,
    sources,
    *,
    vocab_file,
    vocabulary_size,
    lower_case,
    strip_accents,
    sequence_length,
    seed,
    examples_per_shard,
    max_documents,
    vocab_sentences,
    progress,
    deduplicate,
) -> PrepareResult:
    """`prepare_corpus`'s work, written into the (scratch) folder `output_dir`."""
    started = time.perf_counter()
    strip = lower_case if strip_accents is None else strip_accents
    tokens = _vocabulary(
        sources,
        output_dir,
        vocab_file,
        vocabulary_size,
        lower_case,
        strip,
        vocab_sentences,
        max_documents,
    )
    ids = special_ids(tokens)
    tokenizer = ElectraTokenizer(
        output_dir / "vocab.txt", lower_case=lower_case, strip_accents=strip
    )
    tokenize = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
    builder = ExampleBuilder(sequence_length, ids["cls"], ids["sep"], seed=seed, pad_id=ids["pad"])
    writer = ShardWriter(output_dir, examples_per_shard)
    unigram = np.zeros(len(tokens), np.int64)
    stats = CorpusStats()
    examples = total_tokens = 0
    bar = _progress(progress)

    def emit(example):
        nonlocal examples, total_tokens
        if example is None:
            return
        input_ids, input_mask, segment_ids = example
        writer.write(serialize_example(input_ids, input_mask, segment_ids))
        real = np.asarray(input_ids[: sum(input_mask)])
        np.add.at(unigram, real, 1)
        examples += 1
        total_tokens += len(real)

    def flush(documents):
        sentences = [s for document in documents for s in document]
        if not sentences:
            return
        token_lists = tokenize(tf.constant(sentences)).to_list()
        position = 0
        for document in documents:
            for sentence_ids in token_lists[position : position + len(document)]:
                emit(builder.add_sentence(sentence_ids))
            position += len(document)
            emit(builder.end_document())
        if bar is not None:
            bar.update(len(documents))
            bar.set_postfix(tokens=f"{total_tokens:,}", examples=f"{examples:,}", refresh=False)

    buffer, buffered = [], 0
    seen: set[bytes] = set()
    try:
        for document in read_documents(sources, stats, max_documents):
            if deduplicate:
                digest = hashlib.blake2b("\n".join(document).encode("utf-8"), digest_size=16)
                if digest.digest() in seen:
                    stats.skip("duplicate_documents")
                    continue
                seen.add(digest.digest())
            buffer.append(document)
            buffered += len(document)
            if buffered >= 4096:
                flush(buffer)
                buffer, buffered = [], 0
        flush(buffer)
    finally:
        if bar is not None:
            bar.close()
    shards = writer.close()
    if examples == 0:
        for name, _ in shards:
            (output_dir / name).unlink(missing_ok=True)
        raise CorpusError(
            f"No usable text in the input: read {stats.files} files and {stats.documents} "
            f"documents, skipped {dict(stats.skipped) or 'nothing'}."
        )
    np.save(output_dir / UNIGRAM_FILE, unigram)
    manifest = Manifest(
        folder=str(output_dir),
        sequence_length=sequence_length,
        shards=tuple(shards),
        vocab_file="vocab.txt",
        vocabulary_size=len(tokens),
        special_ids=ids,
        extra={
            "lower_case": lower_case,
            "strip_accents": strip,
            "seed": seed,
            "tokens": total_tokens,
            "unigram_counts": UNIGRAM_FILE,
        },
    )
    manifest.write()
    seconds = time.perf_counter() - started
    report = {
        "examples": examples,
        "tokens": total_tokens,
        "seconds": round(seconds, 1),
        "corpus": stats.to_dict(),
    }
    (output_dir / "prepare_report.json").write_text(json.dumps(report, indent=2) + "\n")
    return PrepareResult(manifest, stats, examples, total_tokens, seconds)
