"""The vocabulary `prepare` learns, from a sample of the corpus (local and Beam runs alike).

At most `VOCAB_SAMPLE_BYTES` (64 MB) from 64 places spread evenly over the input
(`corpus.sample_documents`), at most `vocab_sentences` sentences of it, through the
plan's WordPiece learner (`vocabulary.learn_vocabulary`: `tokenizers`' by default): its
time does not grow with the corpus, and the same input gives the same bytes whichever
runner asks.
"""

from __future__ import annotations

import itertools

from electra_tf.data.corpus import CorpusError, CorpusStats, sample_documents
from electra_tf.data.vocabulary import learn_vocabulary

__all__ = ["VOCAB_SAMPLE_BYTES", "learn_sample_vocabulary"]

VOCAB_SAMPLE_BYTES = 64 << 20


def learn_sample_vocabulary(sources, plan) -> tuple[list[str], int]:
    """A vocabulary learned from the input's sample (module docstring); the sentences read.

    `plan` gives `vocabulary_size`, `vocab_sentences`, `lower_case`, `strip_accents` and
    `vocab_learner`.
    """
    stats = CorpusStats()
    documents = sample_documents(sources, stats, VOCAB_SAMPLE_BYTES)
    sentences = itertools.islice((s for d in documents for s in d), plan.vocab_sentences)
    counted = [0]

    def counting():
        for sentence in sentences:
            counted[0] += 1
            yield sentence

    nothing = (
        "No usable text to learn a vocabulary from "
        f"(read {stats.files} files, skipped {dict(stats.skipped) or 'nothing'})."
    )
    try:
        tokens = learn_vocabulary(
            counting(),
            plan.vocabulary_size,
            plan.lower_case,
            plan.strip_accents,
            learner=plan.vocab_learner,
        )
    except (StopIteration, RuntimeError, ValueError):  # the learner found no word to count
        raise CorpusError(nothing) from None
    if len(tokens) <= 5:
        raise CorpusError(nothing)
    return tokens, counted[0]
