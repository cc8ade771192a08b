"""From a corpus to a data folder: vocabulary, packed TFRecord shards and a manifest.

`prepare_corpus(sources, output_dir, ...)` is what `electra-tf prepare` runs:

1. the vocabulary: a given vocab.txt (checked), or one learned with `tokenizers`'
   WordPiece trainer (`vocab_learner="tf-text"`: tensorflow-text's learner) from a
   sample of the corpus: at most `VOCAB_SAMPLE_BYTES` (64 MB) from 64 places spread
   evenly over the input, and at most `vocab_sentences` sentences of it, so its time
   does not grow with the corpus;
2. the input is cut into chunks of whole documents (`electra_tf.data.chunks`), the
   same cuts for any number of workers; `workers` processes (or this one) turn each
   chunk into packed examples (`chunk_work.ChunkWork`: documents, sentences, graph
   tokenization, the reference's `ExampleBuilder` seeded by the seed and the chunk's
   number) written into the chunk's own shards of at most `examples_per_shard`; a
   document whose text repeats an earlier one exactly is dropped and counted, in
   chunk order (`workers.Ledger`);
3. the shards are numbered in chunk order (`pretrain-00000.tfrecord`, ...);
   `manifest.json` lists them with their example counts, the vocabulary and its special
   ids; `unigram_counts.npy` holds token frequencies (for the unigram-generator
   ablation); `prepare_report.json` holds what was read, skipped and adjusted, and the
   timing.

Shards, vocabulary, counts and manifest are a deterministic function of the input,
the options and the seed, byte for byte, whatever `workers` is. Everything is written
into a hidden scratch folder beside the output (never trusted by a later run) and
swapped into place in one atomic rename only when complete (`electra_tf.io.folders`),
with a lock on the output folder against a second prepare; an interrupted or failed
run leaves the previous output exactly as it was. The output folder (and the scratch)
is never read as input. `runner="beam"` runs the chunks (and the vocabulary learner)
as an Apache Beam pipeline instead, to the same bytes (`electra_tf.data.beam_prepare`);
it also writes to an object store (gs://, ...) as versions (`electra_tf.data.beam_output`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import numpy as np

from electra_tf.data.chunk_work import ChunkSettings
from electra_tf.data.chunks import CHUNK_BYTES, is_compressed
from electra_tf.data.corpus import (
    CorpusError,
    CorpusStats,
    corpus_chunks,
    input_bytes,
)
from electra_tf.data.prepare_parts import (
    UNIGRAM_FILE,
    Plan,
    PrepareResult,
    UnigramSum,
    learned_vocabulary,
    prepare_manifest,
    prepare_report,
)
from electra_tf.data.remote_files import is_remote, refusal
from electra_tf.data.shards import SHARD_PATTERN, ShardWriter
from electra_tf.data.vocabulary import (
    LEARNERS,
    read_vocabulary,
    write_vocabulary,
)
from electra_tf.data.vocabulary_sample import VOCAB_SAMPLE_BYTES, learn_sample_vocabulary
from electra_tf.data.workers import ChunkFailed, Ledger, run_chunks
from electra_tf.io.folders import FolderBusy, folder_lock, recover_folder, swap_folder

__all__ = [
    "PrepareResult",
    "prepare_corpus",
    "available_cores",
    "default_workers",
    "ShardWriter",
    "UNIGRAM_FILE",
    "VOCAB_SAMPLE_BYTES",
]


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


#: Chunks each worker should have at least: starting one (TensorFlow's import, the
#: tokenizer) costs about what two chunks of work do.
CHUNKS_PER_WORKER = 4


def default_workers(sources, chunk_bytes: int = CHUNK_BYTES) -> int:
    """One worker per available core, but none with fewer than `CHUNKS_PER_WORKER` chunks.

    A compressed file counts as 3 times its size on disk (a remote one is known by its
    name, .gz or .bz2, sparing a read per file); an input of unknown size (TFDS) gets every
    core. The output does not depend on the choice.
    """
    estimate = 0
    for source in sources:
        files = getattr(source, "files", None)
        if files is None:
            return available_cores()
        estimate += sum(source.file_size(f) * (3 if _compressed(f) else 1) for f in files)
    return max(1, min(available_cores(), estimate // (chunk_bytes * CHUNKS_PER_WORKER)))


def _check_learner(plan: Plan) -> None:
    """A known `vocab_learner`, checked before anything is read or written."""
    if plan.vocab_learner not in LEARNERS:
        raise CorpusError(
            f"Unknown --vocab-learner {plan.vocab_learner!r}; choose one of {', '.join(LEARNERS)}."
        )


def _compressed(path) -> bool:
    if is_remote(path):
        return path.lower().endswith((".gz", ".bz2"))
    return is_compressed(path)


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
    workers: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
    runner: str = "local",
    beam_options=(),
    vocab_learner: str = "tokenizers",
) -> PrepareResult:
    """Writes a data folder for `electra-tf pretrain` (module docstring); a `PrepareResult`.

    Args:
        sources, output_dir: corpus sources (`TextSource`, `JsonlSource`, `TfdsSource`:
            checked when made), and the data folder to write.
        vocab_file: an existing vocab.txt; None learns one of `vocabulary_size` from at
            most `vocab_sentences` sentences.
        lower_case, strip_accents: text normalization (uncased BERT: both on).
        sequence_length, seed: the packed example length, the packing seed.
        examples_per_shard, max_documents: the most examples in a shard (each chunk
            starts one), the most documents read.
        progress: show a progress bar (MB/s, tokens/s, ETA).
        deduplicate: drop documents whose text repeats an earlier one exactly (counted
            as `duplicate_documents`). For held-out text, split documents before packing
            (`electra_tf.data.held_out`): a shard boundary can fall inside a document.
        workers: processes that tokenize and pack (1: this process). More than 1 spawns
            them, so a script calling this must do it under `if __name__ == "__main__":`.
        chunk_bytes: text per chunk (the unit of work); changing it changes the output.
        runner, beam_options: "local" (processes) or "beam" (an Apache Beam pipeline, run
            with these `PipelineOptions` flags; default Beam's local runner in `workers`
            processes); the output is the same.
        vocab_learner: how a vocabulary is learned: "tokenizers" (`tokenizers`' WordPiece
            trainer, seconds) or "tf-text" (tensorflow-text's learner, minutes); recorded
            in `prepare_report.json`.

    Raises:
        CorpusError: no usable text, an output folder holding other files or being
            written by another prepare, a failed or killed worker, or a write that
            failed (disk full, read-only); the previous output is left as it was.
    """
    remote_output = is_remote(str(output_dir))  # Path() would make gs://b/out a folder "gs:"
    started = time.perf_counter()
    output_dir = str(output_dir) if remote_output else Path(output_dir)
    strip = lower_case if strip_accents is None else strip_accents
    plan = Plan(
        str(vocab_file) if vocab_file else None, vocabulary_size, lower_case, strip,
        sequence_length, seed, examples_per_shard, max_documents, vocab_sentences,
        progress, deduplicate, max(1, int(workers)), chunk_bytes, runner, tuple(beam_options),
        vocab_learner,
    )  # fmt: skip
    _check_runner(sources, output_dir, remote_output, runner, beam_options)
    _check_learner(plan)
    if remote_output:
        from electra_tf.data.beam_output import prepare_version

        result = prepare_version(sources, output_dir, plan)
        return dataclasses.replace(result, seconds=time.perf_counter() - started)
    try:
        with folder_lock(output_dir, "electra-tf prepare"):
            recover_folder(output_dir)  # a swap killed between its two renames
            _check_replaceable(output_dir)
            result = _prepare_locked(sources, output_dir, plan)
    except FolderBusy as error:
        raise CorpusError(f"{error}; wait for it to end or choose another --output-dir.") from None
    except OSError as error:  # the lock file itself could not be written
        raise _failure(error, output_dir) from None
    return dataclasses.replace(result, seconds=time.perf_counter() - started)


def _check_runner(sources, output_dir, remote_output: bool, runner: str, beam_options) -> None:
    """One sentence when the runner cannot read the sources or write `output_dir`: only
    Beam writes to a remote filesystem, and reads remote files."""
    if remote_output and runner == "local":
        raise CorpusError(
            f"--output-dir {output_dir} is on a remote filesystem; only --runner beam writes "
            "there (or prepare into a local or shared folder)."
        )
    if runner != "local":  # "beam", or a name checked there
        from electra_tf.data.beam_prepare import check_output, check_runner

        check_runner(runner, sources)
        check_output(beam_options, output_dir)  # a cluster's workers never see a local folder
    else:  # reads with `open`: a source made with remote=True may hold gs://... files
        remote = [f for source in sources for f in getattr(source, "files", ()) if is_remote(f)]
        if remote:
            raise refusal(remote[0])


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


def _failure(error: BaseException, output_dir: Path) -> CorpusError:
    """The one sentence for a failed prepare (the previous output is always kept)."""
    kept = "the previous output is unchanged" if output_dir.exists() else "nothing was kept"
    if isinstance(error, ChunkFailed) and error.kind == "died":
        return CorpusError(
            f"{error.reason} while packing {error.where}; if the machine ran out of memory, "
            f"use fewer --workers ({kept})."
        )
    if isinstance(error, ChunkFailed) and not error.is_io:
        return CorpusError(f"Preparing {error.where} failed ({error.reason}); {kept}.")
    reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
    where = f" while packing {error.where}" if isinstance(error, ChunkFailed) else ""
    return CorpusError(
        f"Could not write the data folder {output_dir} ({reason}){where}; free space or "
        f"choose a writable --output-dir ({kept})."
    )


def _prepare_locked(sources, output_dir: Path, plan: Plan) -> PrepareResult:
    """Writes into a fresh scratch folder and swaps it in; holds the output's lock."""
    scratch = output_dir.with_name(f".{output_dir.name}.prepare-tmp")
    shutil.rmtree(scratch, ignore_errors=True)  # a killed run's: never trusted
    for source in sources:  # the output is never read as input
        if hasattr(source, "exclude"):
            source.exclude([output_dir, scratch, output_dir.with_name(f".{output_dir.name}.old")])
    try:
        scratch.mkdir(parents=True)
        result = _prepare_into(scratch, sources, plan)
    except (OSError, ChunkFailed) as error:
        shutil.rmtree(scratch, ignore_errors=True)
        raise _failure(error, output_dir) from None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    swap_folder(scratch, output_dir)
    manifest = dataclasses.replace(result.manifest, folder=str(output_dir))
    return dataclasses.replace(result, manifest=manifest)


def _vocabulary(sources, folder: Path, plan: Plan) -> tuple[list[str], dict]:
    """The vocabulary written to `folder/vocab.txt`, and what it came from (for the report)."""
    target = folder / "vocab.txt"
    if plan.vocab_file:
        tokens = read_vocabulary(plan.vocab_file)
        write_vocabulary(tokens, target)
        return tokens, {"file": plan.vocab_file}
    if plan.runner == "beam":
        from electra_tf.data.beam_prepare import learn_on_beam

        tokens, counted = learn_on_beam(sources, folder, plan)
    else:
        tokens, counted = learn_sample_vocabulary(sources, plan)
    write_vocabulary(tokens, target)
    return tokens, learned_vocabulary(plan, counted)


def _prepare_into(scratch: Path, sources, plan: Plan) -> PrepareResult:
    """`prepare_corpus`'s work, written into the scratch folder."""
    started = time.perf_counter()
    tokens, vocabulary = _vocabulary(sources, scratch, plan)
    settings = ChunkSettings(
        str(scratch), str(scratch / "vocab.txt"), plan.lower_case, plan.strip_accents,
        plan.sequence_length, plan.seed, plan.examples_per_shard, plan.deduplicate,
    )  # fmt: skip
    unigram = UnigramSum(len(tokens))
    results, timing, ledger = _run(sources, settings, plan, unigram)
    last = max(results, default=-1) if ledger.last_index is None else ledger.last_index
    shards, stats = _number_shards(scratch, [results[i] for i in range(last + 1)])
    examples = sum(count for _, count in shards)
    if examples == 0:
        raise CorpusError(
            f"No usable text in the input: read {stats.files} files and {stats.documents} "
            f"documents, skipped {dict(stats.skipped) or 'nothing'}."
        )
    np.save(scratch / UNIGRAM_FILE, unigram.counts)
    manifest = prepare_manifest(scratch, plan, tokens, shards, int(unigram.counts.sum()))
    manifest.write()
    result = PrepareResult(manifest, stats, examples, manifest.extra["tokens"], 0.0, plan.workers)
    result = dataclasses.replace(result, seconds=time.perf_counter() - started, timing=timing)
    (scratch / "prepare_report.json").write_text(prepare_report(result, plan, unigram, vocabulary))
    return result


def _run(sources, settings: ChunkSettings, plan: Plan, on_result):
    """Every chunk's `ChunkResult` by number, the `RunTiming` and the `Ledger` that decided."""
    ledger = Ledger(plan.deduplicate, plan.max_documents)
    if plan.runner == "beam":
        from electra_tf.data.beam_prepare import run_on_beam

        return run_on_beam(sources, settings, plan, ledger, on_result)
    chunks = corpus_chunks(sources, plan.chunk_bytes)
    progress = (plan.progress, input_bytes(sources))
    results, timing = run_chunks(chunks, settings, plan.workers, ledger, progress, on_result)
    return results, timing, ledger


def _number_shards(scratch: Path, results) -> tuple[list, CorpusStats]:
    """Renames every chunk's shards to `pretrain-NNNNN.tfrecord` in chunk order."""
    shards, stats = [], CorpusStats()
    for result in results:
        stats.merge(result.stats)
        for name, count in result.shards:
            final = SHARD_PATTERN.format(len(shards))
            os.replace(scratch / name, scratch / final)
            shards.append((final, count))
    return shards, stats
