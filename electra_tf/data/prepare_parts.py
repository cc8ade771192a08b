"""What a local and a Beam `prepare` write alike: the result, the plan, the counts, the
manifest and the report (`electra_tf.data.prepare`, `electra_tf.data.beam_output`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from electra_tf.data.documents import CorpusStats
from electra_tf.data.tfrecords import Manifest
from electra_tf.data.vocabulary import special_ids
from electra_tf.data.vocabulary_sample import VOCAB_SAMPLE_BYTES
from electra_tf.data.workers import RunTiming, peak_memory

__all__ = [
    "UNIGRAM_FILE",
    "PrepareResult",
    "Plan",
    "UnigramSum",
    "prepare_report",
    "prepare_manifest",
    "learned_vocabulary",
]

UNIGRAM_FILE = "unigram_counts.npy"


@dataclasses.dataclass
class PrepareResult:
    """What `prepare_corpus` wrote and read, and how long it took."""

    manifest: Manifest
    stats: CorpusStats
    examples: int
    tokens: int
    seconds: float
    workers: int = 1
    timing: RunTiming = dataclasses.field(default_factory=RunTiming)


@dataclasses.dataclass(frozen=True)
class Plan:
    """`prepare_corpus`'s options, in one value."""

    vocab_file: str | None
    vocabulary_size: int
    lower_case: bool
    strip_accents: bool
    sequence_length: int
    seed: int
    examples_per_shard: int
    max_documents: int | None
    vocab_sentences: int
    progress: bool
    deduplicate: bool
    workers: int
    chunk_bytes: int
    runner: str = "local"
    beam_options: tuple = ()
    vocab_learner: str = "tokenizers"  # `vocabulary.LEARNERS`


class UnigramSum:
    """Token counts summed as chunks finish (in any order: the sum is the same)."""

    def __init__(self, size: int):
        self.counts, self.tokenized = np.zeros(size, np.int64), 0

    def __call__(self, result) -> None:
        self.counts += result.unigram
        result.unigram = None
        self.tokenized += result.tokenized


def prepare_report(result: PrepareResult, plan: Plan, unigram: UnigramSum, vocabulary: dict) -> str:
    """`prepare_report.json`'s text: what was read, skipped and adjusted, and the timing."""
    report = {
        "examples": result.examples,
        "tokens": result.tokens,
        "tokenized": unigram.tokenized,
        "shards": len(result.manifest.shards),
        "seconds": round(result.seconds, 1),
        "workers": plan.workers,
        "runner": plan.runner,
        "timing": {k: round(v, 2) for k, v in dataclasses.asdict(result.timing).items()},
        "peak_rss_mb": peak_memory(),
        "vocabulary": vocabulary,
        "corpus": result.stats.to_dict(),
    }
    return json.dumps(report, indent=2) + "\n"


def learned_vocabulary(plan: Plan, sentences: int) -> dict:
    """The report's `vocabulary` for a learned one: the learner and what it read."""
    return {
        "learner": plan.vocab_learner,
        "learned_from_sentences": sentences,
        "sample_bytes": VOCAB_SAMPLE_BYTES,
    }


def prepare_manifest(folder: Path, plan: Plan, tokens: list, shards: list, count: int) -> Manifest:
    return Manifest(
        folder=str(folder),
        sequence_length=plan.sequence_length,
        shards=tuple(shards),
        vocab_file="vocab.txt",
        vocabulary_size=len(tokens),
        special_ids=special_ids(tokens),
        extra={
            "lower_case": plan.lower_case,
            "strip_accents": plan.strip_accents,
            "seed": plan.seed,
            "tokens": count,
            "unigram_counts": UNIGRAM_FILE,
        },
    )
