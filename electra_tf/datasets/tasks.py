"""Fine-tuning tasks: what each reads, predicts and is scored by.

GLUE tasks read the official TSV files (`train.tsv`, `dev.tsv`; MNLI's
`dev_matched.tsv` and `dev_mismatched.tsv`) or TFDS's `glue/*`. The movie
review task reads `movieReviewSnippets_GroundTruth.txt` (see `readers`).
Metrics follow the paper: Matthews correlation for CoLA, Spearman for STS-B,
accuracy elsewhere (F1 also reported for MRPC and QQP).
"""

from __future__ import annotations

import dataclasses

from electra_tf.config import ConfigError

__all__ = ["Task", "TASKS", "get_task"]


@dataclasses.dataclass(frozen=True)
class Task:
    """One fine-tuning task.

    Attributes:
        name: the task's name.
        kind: a registered kind: "classification", "regression", "question_answering", ...
        labels: the label strings of a classification task, in class-id order.
        columns: TSV header names of (text_a, text_b or None, label).
        column_indices: the same as column indices, for header-less files (CoLA).
        header: whether the TSV files start with a header line.
        dev_splits: file stems of the dev sets.
        metrics: metric names; the first is the task's main score.
        tfds: the TFDS name and its (text_a, text_b, label) feature names.
        epochs: the paper's fine-tuning epochs.
        source: how its files are read: "glue" (TSV files or TFDS), "movie_reviews" (the
            snippets file and its fixed split) or "squad" (SQuAD JSON).
        score_range: (low, high) of a scored task's gold values (STS-B: 0 to 5).
        version_2: question answering under SQuAD 2.0 (the answerability head, the no-answer
            threshold chosen on dev) whatever the files hold; else 2.0 only when a train or
            dev question is unanswerable.

    A task without label names has numeric gold scores.
    """

    name: str
    kind: str
    labels: tuple = ()
    columns: tuple = ()
    column_indices: tuple = ()
    header: bool = True
    dev_splits: tuple = ("dev",)
    metrics: tuple = ("accuracy",)
    tfds: tuple = ()
    epochs: int = 3
    source: str = "glue"
    score_range: tuple | None = None
    version_2: bool = False

    @property
    def scored(self) -> bool:
        """Whether the gold labels are numbers (no label names)."""
        return not self.labels

    @property
    def num_outputs(self) -> int:
        return len(self.labels) or 1

    @property
    def pair(self) -> bool:
        return bool(self.columns and self.columns[1]) or bool(
            self.column_indices and self.column_indices[1] is not None
        )


#: SQuAD's (question, context, answers): a question answerer reads pairs.
SQUAD_COLUMNS = ("question", "context", "answers")

TASKS = {
    task.name: task
    for task in (
        Task(
            "cola",
            "classification",
            ("0", "1"),
            column_indices=(3, None, 1),
            header=False,
            metrics=("mcc", "accuracy"),
            tfds=("glue/cola", "sentence", None, "label"),
        ),
        Task(
            "sst2",
            "classification",
            ("0", "1"),
            ("sentence", None, "label"),
            tfds=("glue/sst2", "sentence", None, "label"),
        ),
        Task(
            "mrpc",
            "classification",
            ("0", "1"),
            ("#1 String", "#2 String", "Quality"),
            metrics=("accuracy", "f1"),
            tfds=("glue/mrpc", "sentence1", "sentence2", "label"),
        ),
        Task(
            "stsb",
            "regression",
            (),
            ("sentence1", "sentence2", "score"),
            metrics=("spearman", "pearson"),
            tfds=("glue/stsb", "sentence1", "sentence2", "label"),
            epochs=10,
            score_range=(0.0, 5.0),
        ),
        Task(
            "qqp",
            "classification",
            ("0", "1"),
            ("question1", "question2", "is_duplicate"),
            metrics=("accuracy", "f1"),
            tfds=("glue/qqp", "question1", "question2", "label"),
        ),
        Task(
            "mnli",
            "classification",
            ("contradiction", "entailment", "neutral"),
            ("sentence1", "sentence2", "gold_label"),
            dev_splits=("dev_matched", "dev_mismatched"),
            tfds=("glue/mnli", "premise", "hypothesis", "label"),
        ),
        Task(
            "qnli",
            "classification",
            ("entailment", "not_entailment"),
            ("question", "sentence", "label"),
            tfds=("glue/qnli", "question", "sentence", "label"),
        ),
        Task(
            "rte",
            "classification",
            ("entailment", "not_entailment"),
            ("sentence1", "sentence2", "label"),
            tfds=("glue/rte", "sentence1", "sentence2", "label"),
            epochs=10,
        ),
        Task(
            "movie_reviews",
            "classification",
            ("negative", "positive"),
            metrics=("accuracy", "f1"),
            source="movie_reviews",
        ),
        Task(
            "movie_ratings",
            "regression",
            (),
            metrics=("spearman", "pearson"),
            source="movie_reviews",
        ),
        # SQuAD: the product kind (`tasks/kinds/question_answering.py`), one QA path.
        Task(
            "squad1",
            "question_answering",
            columns=SQUAD_COLUMNS,
            metrics=("exact", "f1"),
            epochs=2,
            source="squad",
        ),
        Task(
            "squad2",
            "question_answering",
            columns=SQUAD_COLUMNS,
            metrics=("exact", "f1"),
            epochs=2,
            source="squad",
            version_2=True,
        ),
    )
}

# TFDS's glue/mnli names its dev sets validation_matched / validation_mismatched.
TFDS_SPLITS = {
    "train": "train",
    "dev": "validation",
    "dev_matched": "validation_matched",
    "dev_mismatched": "validation_mismatched",
}


def get_task(name: str) -> Task:
    key = name.lower().replace("-", "").replace("sst-2", "sst2")
    key = {"sts-b": "stsb", "squad": "squad1", "squad11": "squad1", "squad20": "squad2"}.get(
        key, key
    )
    if key not in TASKS:
        raise ConfigError(f"Unknown task {name!r}: choose one of {', '.join(TASKS)}.")
    return TASKS[key]
