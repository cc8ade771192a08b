"""The text a released encoder is adapted on, split and packed (the demo and the experiments).

Three corpora, from vaderSentiment's snippet files (`electra_tf.data.public`):

- `domain`: the Amazon-review, tweet and New York Times editorial snippets (opinionated
  text near the movie reviews' domain, disjoint from them);
- `task`: the probe task's own training texts, labels dropped (task-adaptive
  pre-training, Gururangan et al. 2020); never a dev or test text;
- `both`: the two together.

Each is split by `electra_tf.data.held_out.split_documents` (near-duplicates dropped,
5% of every corpus's documents held out) and both sides are packed with the encoder's
vocabulary into `<data_dir>/adapt-<kind>-<tag>-s<length>/` and the same name ending `-held-out`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

__all__ = ["ADAPTATION_CORPORA", "AdaptationData", "adaptation_corpus"]

ADAPTATION_CORPORA = ("domain", "task", "both")


@dataclasses.dataclass
class AdaptationData:
    """Packed training and held-out examples of one adaptation corpus, and its split report."""

    kind: str
    train: Path
    held_out: Path
    report: dict


def _documents(kind: str, snippets: dict, probe_task: str) -> dict:
    from electra_tf.config import ConfigError
    from electra_tf.data.public import snippet_documents
    from electra_tf.datasets.readers import movie_review_split, read_movie_reviews
    from electra_tf.datasets.tasks import get_task

    if kind not in ADAPTATION_CORPORA:
        raise ConfigError(
            f"Unknown adaptation corpus {kind!r}: choose from {', '.join(ADAPTATION_CORPORA)}."
        )
    corpora = {}
    if kind in ("domain", "both"):
        for name, path in snippets.items():
            if name != probe_task:
                corpora[name] = snippet_documents(path)
    if kind in ("task", "both"):
        task = get_task(probe_task)
        train = movie_review_split(read_movie_reviews(snippets[probe_task]), task)["train"]
        corpora[f"{probe_task} (training texts)"] = [example.text_a for example in train]
    return corpora


def adaptation_corpus(
    kind: str,
    snippets: dict,
    data_dir,
    *,
    vocab_file: str,
    lower_case: bool,
    sequence_length: int,
    tag: str = "minilm",
    probe_task: str = "movie_reviews",
    log=None,
) -> AdaptationData:
    """Corpus `kind` split and packed (once; later calls reuse the folders).

    Args:
        kind: one of `ADAPTATION_CORPORA`.
        snippets: `fetch_snippets`'s files, by name.
        data_dir: where the texts (`corpora/`) and the packed folders go.
        vocab_file, lower_case: the encoder's vocabulary and casing.
        sequence_length: the packed examples' length.
        tag: names the vocabulary in the folders' names.
        probe_task: the task whose texts the corpora keep apart (or, for `task`, use).
        log: called with a line before packing.
    """
    from electra_tf.data.held_out import prepare_split

    data_dir = Path(data_dir)
    train = data_dir / f"adapt-{kind}-{tag}-s{sequence_length}"
    held_out = data_dir / f"{train.name}-held-out"
    report = prepare_split(
        lambda: _documents(kind, snippets, probe_task),
        data_dir / "corpora" / f"adapt-{kind}-split.json",
        {side: data_dir / "corpora" / f"adapt-{kind}-{side}.txt" for side in ("train", "held-out")},
        {"train": train, "held-out": held_out},
        layout="lines",
        log=log and (lambda side: log(f"packing the {kind} corpus's {side} documents")),
        vocab_file=vocab_file,
        lower_case=lower_case,
        sequence_length=sequence_length,
        progress=False,
    )
    return AdaptationData(kind, train, held_out, report)
