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
import json
from pathlib import Path

__all__ = ["ADAPTATION_CORPORA", "AdaptationData", "adaptation_corpus"]

ADAPTATION_CORPORA = ("domain", "task", "both")
HELD_OUT_FRACTION = 0.05


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
    from electra_tf.finetuning.readers import movie_review_split, read_movie_reviews
    from electra_tf.finetuning.tasks import get_task

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
    from electra_tf.data.corpus import TextSource
    from electra_tf.data.held_out import split_documents, write_lines_corpus
    from electra_tf.data.prepare import prepare_corpus

    data_dir = Path(data_dir)
    train = data_dir / f"adapt-{kind}-{tag}-s{sequence_length}"
    held_out = data_dir / f"{train.name}-held-out"
    report_path = data_dir / "corpora" / f"adapt-{kind}-split.json"
    texts = {
        "train": data_dir / "corpora" / f"adapt-{kind}-train.txt",
        "held-out": data_dir / "corpora" / f"adapt-{kind}-held-out.txt",
    }
    if not report_path.exists():
        split = split_documents(_documents(kind, snippets, probe_task), HELD_OUT_FRACTION)
        write_lines_corpus(split.train, texts["train"])
        write_lines_corpus(split.held_out, texts["held-out"])
        report_path.write_text(json.dumps(split.report, indent=2) + "\n")
    for side, folder in (("train", train), ("held-out", held_out)):
        if (folder / "manifest.json").exists():
            continue
        if log is not None:
            log(f"packing the {kind} corpus's {side} documents with the encoder's vocabulary")
        prepare_corpus(
            [TextSource([str(texts[side])], layout="lines")],
            folder,
            vocab_file=vocab_file,
            lower_case=lower_case,
            sequence_length=sequence_length,
            examples_per_shard=1000,
            progress=False,
        )
    return AdaptationData(kind, train, held_out, json.loads(report_path.read_text()))
