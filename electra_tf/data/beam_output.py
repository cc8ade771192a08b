"""`prepare --runner beam` into an object store (gs://, s3://, ...): versions and a pointer.

An object store has no rename and no folder swap, so a run to a remote `--output-dir
OUT` (any `scheme://` path Beam's `FileSystems` writes) never replaces what is there:

1. it writes everything under a fresh prefix, `OUT/versions/<UTC time>-<random hex>/`:
   the workers write the shards under their final names (`pretrain-NNNNN.tfrecord`,
   each object written whole), the driver `vocab.txt`, `unigram_counts.npy`,
   `manifest.json` and `prepare_report.json`, the same bytes as a local run's folder
   (`prepare_report.json` aside: timings, the runner);
2. only then the driver writes `OUT/latest.json`, `{"version": "versions/<id>"}`: that
   single write is the commit point. Readers (`tfrecords.published_folder`: `electra-tf
   pretrain --data OUT`) follow it to the version.

A failed or killed run never writes the pointer, so readers keep the previous complete
version; its partial prefix is left under `versions/` (named in the error; delete it
with `gsutil -m rm -r` or the store's tool). Earlier versions are kept too. Two runs at
once each write their own version; the pointer names the one that ended last. The
driver and the workers need no shared folder; the workers get the vocabulary's tokens
with the pipeline. An `OUT` holding a `manifest.json` of its own (a folder copied up) is
refused, so that readers see one layout.
"""

from __future__ import annotations

import dataclasses
import io
import json
import secrets
import time

import numpy as np

from electra_tf.data.beam_prepare import learn_on_beam, run_on_beam
from electra_tf.data.chunk_work import ChunkSettings
from electra_tf.data.documents import CorpusError, CorpusStats
from electra_tf.data.prepare_parts import (
    UNIGRAM_FILE,
    PrepareResult,
    UnigramSum,
    learned_vocabulary,
    prepare_manifest,
    prepare_report,
)
from electra_tf.data.remote_files import check_writable, join, list_objects, write_object
from electra_tf.data.shards import SHARD_PATTERN
from electra_tf.data.tfrecords import MANIFEST, POINTER, VERSIONS
from electra_tf.data.vocabulary import read_vocabulary
from electra_tf.data.workers import ChunkFailed, Ledger

__all__ = ["prepare_version", "new_version"]


def new_version() -> str:
    """A fresh version's name: the UTC time, then random hex (sorts by time)."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(4)}"


def prepare_version(sources, output_dir: str, plan) -> PrepareResult:
    """`prepare_corpus(..., runner="beam")` into the remote `output_dir` (module docstring)."""
    out = output_dir.rstrip("/")
    check_writable(out)
    if list_objects(join(out, MANIFEST)):
        raise CorpusError(
            f"--output-dir {out} holds a {MANIFEST} of its own (a folder copied up?); choose "
            "an empty or new --output-dir for prepare --runner beam."
        )
    folder = join(out, VERSIONS, new_version())
    for source in sources:  # the output is never read as input
        if hasattr(source, "exclude"):
            source.exclude([out])
    try:
        result = _prepare_into(sources, folder, plan)
        write_object(join(out, POINTER), _pointer(folder, out))  # the commit point
    except (OSError, ChunkFailed, CorpusError) as error:
        raise _failure(error, out, folder) from None
    return result


def _pointer(folder: str, out: str) -> bytes:
    return (json.dumps({"version": folder[len(out) + 1 :]}) + "\n").encode()


def _failure(error: BaseException, out: str, folder: str) -> CorpusError:
    """One sentence: what failed, the pointer unchanged, the partial version left."""
    if isinstance(error, ChunkFailed):
        reason = f"Preparing {error.where} failed ({error.reason})"
    elif isinstance(error, CorpusError):
        reason = str(error).rstrip(".")
    else:
        reason = f"Could not write {out} ({getattr(error, 'strerror', None) or error})"
    return CorpusError(
        f"{reason}; {join(out, POINTER)} was not changed (readers keep the previous version) "
        f"and the partial {folder}/ is left: delete it."
    )


def _vocabulary(sources, folder: str, plan) -> tuple[list, dict]:
    if plan.vocab_file:
        return read_vocabulary(plan.vocab_file), {"file": plan.vocab_file}
    tokens, counted = learn_on_beam(sources, folder, plan)
    return tokens, learned_vocabulary(plan, counted)


def _prepare_into(sources, folder: str, plan) -> PrepareResult:
    """`prepare._prepare_into` through `FileSystems`, into the version `folder`."""
    started = time.perf_counter()
    tokens, vocabulary = _vocabulary(sources, folder, plan)
    write_object(join(folder, "vocab.txt"), "".join(f"{t}\n" for t in tokens).encode("utf-8"))
    settings = ChunkSettings(
        folder, join(folder, "vocab.txt"), plan.lower_case, plan.strip_accents,
        plan.sequence_length, plan.seed, plan.examples_per_shard, plan.deduplicate,
    )  # fmt: skip
    unigram, ledger = UnigramSum(len(tokens)), Ledger(plan.deduplicate, plan.max_documents)
    results, timing, ledger = run_on_beam(sources, settings, plan, ledger, unigram, tokens)
    last = max(results, default=-1) if ledger.last_index is None else ledger.last_index
    shards, stats = [], CorpusStats()
    for index in range(last + 1):
        stats.merge(results[index].stats)
        shards.extend(results[index].shards)
    if [name for name, _ in shards] != [SHARD_PATTERN.format(n) for n in range(len(shards))]:
        raise ChunkFailed("the input on Beam", "the shards written are not numbered in order")
    examples = sum(count for _, count in shards)
    if examples == 0:
        raise CorpusError(
            f"No usable text in the input: read {stats.files} files and {stats.documents} "
            f"documents, skipped {dict(stats.skipped) or 'nothing'}."
        )
    counts = io.BytesIO()
    np.save(counts, unigram.counts)
    write_object(join(folder, UNIGRAM_FILE), counts.getvalue())
    manifest = prepare_manifest(folder, plan, tokens, shards, int(unigram.counts.sum()))
    write_object(join(folder, MANIFEST), manifest.text().encode("utf-8"))
    result = PrepareResult(manifest, stats, examples, manifest.extra["tokens"], 0.0, plan.workers)
    result = dataclasses.replace(result, seconds=time.perf_counter() - started, timing=timing)
    write_object(
        join(folder, "prepare_report.json"),
        prepare_report(result, plan, unigram, vocabulary).encode(),
    )
    return result
