"""Readers for fine-tuning data: GLUE TSVs, TFDS `glue/*`, and the movie-review snippets.

A reader returns `Example`s and a `ReadReport` of what it skipped. A file
that is not the task's format (a missing column header, a label outside the
task's set) fails with one sentence naming the file and line; rows that are
merely unusable (too few columns, empty text) are skipped and counted.

The movie-review split (`movie_review_split`) is fixed and documented:
rows are shuffled with `numpy.random.default_rng(20200219)` and cut 80/10/10
into train/dev/test; the binary task drops the 37 rows rated exactly 0 and
labels the rest by the sign of the mean rating.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import io
import math
import sys
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError
from electra_tf.datasets.tasks import TFDS_SPLITS, Task

__all__ = [
    "Example",
    "ReadReport",
    "utf8_text",
    "read_glue_tsv",
    "read_glue_tfds",
    "read_movie_reviews",
    "movie_review_split",
    "MOVIE_REVIEW_SEED",
]

MOVIE_REVIEW_SEED = 20200219


@dataclasses.dataclass(frozen=True)
class Example:
    text_a: str
    text_b: str | None
    label: object  # class id (int) or float target
    guid: str = ""


@dataclasses.dataclass
class ReadReport:
    """What reading a task's files found: rows read, rows skipped by reason (with row numbers
    where known), skipped ids."""

    read: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    skipped_ids: list = dataclasses.field(default_factory=list)
    skipped_rows: dict = dataclasses.field(default_factory=dict)  # reason -> row numbers


def _label(task: Task, raw: str, path, line: int):
    if task.scored:
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(
                f"{path}, line {line}: the {task.name} score {raw!r} is not a number."
            ) from None
    if raw not in task.labels:
        raise ConfigError(
            f"{path}, line {line}: label {raw!r} is not one of {task.name}'s labels "
            f"({', '.join(task.labels)}); is this the right task's file?"
        )
    return task.labels.index(raw)


def utf8_text(path: Path) -> str:
    """The file's text; a byte that is not UTF-8 fails with one sentence naming its line."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ConfigError(
            f"{path}, line {line}: byte 0x{data[error.start]:02x} at column {column} is not "
            "UTF-8; save the file as UTF-8."
        ) from None


def read_glue_tsv(task: Task, path, report: ReadReport | None = None) -> list[Example]:
    """Examples of a GLUE task's official TSV file (train, dev or labelled test)."""
    path = Path(path)
    report = report if report is not None else ReadReport()
    if not path.exists():
        raise ConfigError(f"{path} does not exist; download {task.name}'s GLUE data there.")
    csv.field_size_limit(sys.maxsize)
    text = utf8_text(path)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    if task.header:
        if not rows:
            raise ConfigError(f"{path} is empty.")
        header = rows[0]
        indices = []
        for name in task.columns:
            if name is None:
                indices.append(None)
                continue
            if name not in header:
                raise ConfigError(
                    f"{path}, line 1: the header has no {name!r} column ({task.name} needs "
                    f"{', '.join(c for c in task.columns if c)})."
                )
            indices.append(header.index(name))
        body, first_line = rows[1:], 2
    else:
        indices, body, first_line = list(task.column_indices), rows, 1
    a_index, b_index, label_index = indices
    needed = max(i for i in indices if i is not None)
    examples = []
    for offset, row in enumerate(body):
        line = first_line + offset
        if len(row) <= needed:
            report.skipped["rows_with_missing_columns"] += 1
            continue
        text_a = row[a_index].strip()
        text_b = row[b_index].strip() if b_index is not None else None
        if not text_a or (b_index is not None and not text_b):
            report.skipped["empty_text"] += 1
            continue
        label = _label(task, row[label_index].strip(), path, line)
        examples.append(Example(text_a, text_b, label, f"{path.stem}-{line}"))
    report.read += len(examples)
    return examples


def read_glue_tfds(
    task: Task, split: str, data_dir=None, download: bool = True, report: ReadReport | None = None
) -> list[Example]:
    """Examples of TFDS's `glue/<task>` (labels are TFDS's class ids, in the GLUE order)."""
    import tensorflow_datasets as tfds

    report = report if report is not None else ReadReport()
    if not task.tfds:
        raise ConfigError(f"{task.name} has no TFDS version; pass --data-dir with its files.")
    name, a_key, b_key, label_key = task.tfds
    try:
        dataset = tfds.load(
            name, split=TFDS_SPLITS.get(split, split), data_dir=data_dir, download=download
        )
    except Exception as error:  # noqa: BLE001 - TFDS raises several kinds here
        raise ConfigError(
            f"TFDS {name} ({split}) cannot be loaded: {str(error).splitlines()[0]}."
        ) from None
    examples = []
    for i, record in enumerate(dataset.as_numpy_iterator()):
        text_a = record[a_key].decode("utf-8").strip()
        text_b = record[b_key].decode("utf-8").strip() if b_key else None
        label = record[label_key]
        if not task.scored and int(label) < 0:  # TFDS marks unlabelled rows -1
            report.skipped["unlabelled"] += 1
            continue
        if not text_a or (b_key and not text_b):
            report.skipped["empty_text"] += 1
            continue
        label = float(label) if task.scored else int(label)
        examples.append(Example(text_a, text_b, label, f"{split}-{i}"))
    report.read += len(examples)
    return examples


def read_movie_reviews(path, report: ReadReport | None = None) -> list[tuple[str, float]]:
    """(text, mean rating) rows of `movieReviewSnippets_GroundTruth.txt` (id, rating, text)."""
    path = Path(path)
    report = report if report is not None else ReadReport()
    if not path.exists():
        raise ConfigError(f"{path} does not exist; `electra-tf finetune` can fetch it (--fetch).")
    rows = []
    for line_number, line in enumerate(
        path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
    ):
        parts = line.split("\t")
        if len(parts) < 3:
            report.skipped["rows_with_missing_columns"] += 1
            continue
        try:
            rating = float(parts[1])
        except ValueError:
            raise ConfigError(
                f"{path}, line {line_number}: rating {parts[1]!r} is not a number."
            ) from None
        if not math.isfinite(rating):  # "nan" parses; its sign would make it negative
            report.skipped["non_finite_rating"] += 1
            continue
        text = "\t".join(parts[2:]).strip()
        if not text:
            report.skipped["empty_text"] += 1
            continue
        rows.append((text, rating))
    report.read += len(rows)
    return rows


def movie_review_split(rows, task: Task) -> dict[str, list[Example]]:
    """The fixed train/dev/test split (see the module docstring), as task examples."""
    order = np.random.default_rng(MOVIE_REVIEW_SEED).permutation(len(rows))
    n = len(rows)
    cuts = {
        "train": order[: int(0.8 * n)],
        "dev": order[int(0.8 * n) : int(0.9 * n)],
        "test": order[int(0.9 * n) :],
    }
    splits = {}
    for split, indices in cuts.items():
        examples = []
        for i in sorted(indices.tolist()):
            text, rating = rows[i]
            if task.scored:
                examples.append(Example(text, None, float(rating), f"{split}-{i}"))
            elif rating != 0:
                examples.append(Example(text, None, int(rating > 0), f"{split}-{i}"))
        splits[split] = examples
    return splits
