"""The splits of a task: GLUE files or TFDS, the movie-review snippets, or SQuAD JSON."""

from __future__ import annotations

import collections
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets.readers import (
    ReadReport,
    movie_review_split,
    read_glue_tfds,
    read_glue_tsv,
    read_movie_reviews,
)
from electra_tf.datasets.squad import read_squad
from electra_tf.datasets.tasks import Task

__all__ = ["task_splits", "squad_splits"]


def squad_splits(task: Task, data_dir, report: ReadReport | None = None) -> dict:
    """{"train": [...], "dev": [...]} `SquadExample`s from `data_dir`'s official files.

    SQuAD 1.1 reads `train-v1.1.json` and `dev-v1.1.json`, SQuAD 2.0 the `-v2.0`
    files. Training keeps the questions whose answer was found in its context (and
    the unanswerable ones); the others are counted in `report.skipped` and their ids
    listed in `report.skipped_ids`. Every dev question is scored.
    """
    report = report if report is not None else ReadReport()
    version_2 = task.version_2
    suffix = "v2.0" if version_2 else "v1.1"
    folder = Path(data_dir or ".")
    counter = collections.Counter()
    train = [
        e
        for e in read_squad(folder / f"train-{suffix}.json", version_2, counter)
        if e.start_word >= 0 or not e.answers
    ]
    for key, count in counter.items():
        if key.startswith("skipped:"):
            report.skipped_ids.append(key.split(":", 1)[1])
        else:
            report.skipped[key] += count
    dev = read_squad(folder / f"dev-{suffix}.json", version_2, collections.Counter())
    report.read += len(train) + len(dev)
    return {"train": train, "dev": dev}


def task_splits(
    task: Task,
    *,
    data_dir=None,
    tfds: bool = False,
    tfds_data_dir=None,
    movie_file=None,
    fetch_dir=None,
    report: ReadReport | None = None,
) -> dict:
    """{"train": [...], "<dev split>": [...], ...} for a task.

    GLUE: `data_dir` with the official TSVs (train.tsv, dev.tsv or MNLI's dev_matched.tsv
    and dev_mismatched.tsv), or `tfds=True` for TFDS's glue/*. Movie reviews: the snippets
    file (`movie_file`, or downloaded into `fetch_dir`), split as
    `readers.movie_review_split` documents. SQuAD: `data_dir` with the official JSON
    files (`squad_splits`).
    """
    report = report if report is not None else ReadReport()
    if task.source == "squad":
        return squad_splits(task, data_dir, report)
    if task.source == "movie_reviews":
        if movie_file is None and fetch_dir is not None:
            from electra_tf.data.public import fetch_movie_reviews

            movie_file = fetch_movie_reviews(fetch_dir)
        if movie_file is None:
            raise ConfigError(
                f"{task.name} needs --data (movieReviewSnippets_GroundTruth.txt) or --fetch."
            )
        return movie_review_split(read_movie_reviews(movie_file, report), task)
    if tfds:
        return {
            split: read_glue_tfds(task, split, tfds_data_dir, report=report)
            for split in ("train", *task.dev_splits)
        }
    if data_dir is None:
        raise ConfigError(f"{task.name} needs --data-dir with its GLUE TSV files, or --tfds.")
    folder = Path(data_dir)
    return {
        split: read_glue_tsv(task, folder / f"{split}.tsv", report)
        for split in ("train", *task.dev_splits)
    }
