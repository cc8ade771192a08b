"""The splits of a task, from GLUE files, TFDS, or the movie-review snippets."""

from __future__ import annotations

from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.finetuning.readers import (
    ReadReport,
    movie_review_split,
    read_glue_tfds,
    read_glue_tsv,
    read_movie_reviews,
)
from electra_tf.finetuning.tasks import Task

__all__ = ["task_splits"]


def task_splits(
    task: Task,
    *,
    data_dir=None,
    tfds: bool = False,
    tfds_data_dir=None,
    movie_file=None,
    report: ReadReport | None = None,
) -> dict:
    """{"train": [...], "<dev split>": [...], ...} for a classification or regression task.

    GLUE: `data_dir` with the official TSVs (train.tsv, dev.tsv or MNLI's dev_matched.tsv
    and dev_mismatched.tsv), or `tfds=True` for TFDS's glue/*. Movie reviews: the snippets
    file (`movie_file`), split as `readers.movie_review_split` documents.
    """
    report = report if report is not None else ReadReport()
    if task.name.startswith("movie_"):
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
