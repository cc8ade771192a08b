"""Fine-tuning on your own files: a task made from labelled CSV, TSV, JSON Lines or CoNLL files.

`finetune_files(init, train=..., dev=..., test=..., columns=...)` reads the
files with the kind's reader (tables: `electra_tf.datasets.files`; CoNLL:
`electra_tf.datasets.conll`), decides the kind and the label names from the
training file (`electra_tf.tasks.kind.infer_kind`), refuses a
dev or test label that training never had, and runs the same driver as the
named tasks (`electra_tf.finetuning.run.finetune`). The report says how the
kind and label order were decided and which rows were skipped, by reason and
row number; the run folder records the files' sizes and SHA-256, so re-running
the command resumes only on the same data.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from electra_tf.datasets.files import Columns
from electra_tf.datasets.tasks import Task
from electra_tf.io.durable import digest, write_atomic
from electra_tf.tasks.config import FinetuneConfig, load_finetune_recipe
from electra_tf.tasks.initialization import load_initialization
from electra_tf.tasks.kind import infer_kind
from electra_tf.tasks.registry import get_kind, kind_names

__all__ = ["user_task", "finetune_files"]


def _kind_of_format(path, columns: Columns) -> str | None:
    """The kind that owns the file's format (CoNLL: tagging; SQuAD JSON: question
    answering), if one does."""
    owners = [n for n in kind_names(from_files=True) if get_kind(n).recognizes(path, columns)]
    return owners[0] if owners else None


def user_task(
    train,
    dev,
    test=None,
    columns: Columns | None = None,
    kind: str | None = None,
    labels=None,
    name: str | None = None,
) -> tuple[Task, dict, dict, str]:
    """(task, splits, read reports, how the kind was decided) of the user's files.

    Args:
        train, dev, test: the files (test optional; without labels it is only predicted).
        columns: where the text, the text pair and the label are.
        kind: a registered kind that reads files (`kind_names(from_files=True)`); None
            infers it (CoNLL files are tagging; see `infer_kind`).
        labels: the label names in class-id order (default: sorted).
        name: the task's name (default: the training file's stem).

    Labels are names: a JSON number such as `"stars": 3` is the label "3", as the same
    cell of a CSV file would be, so `--labels` orders names whatever their type.
    """
    columns = columns or Columns()
    owner = _kind_of_format(train, columns)
    how = None
    if kind is None and owner is not None:
        kind, how = owner, f"inferred: the format of {Path(train).name}"
    reader = get_kind(kind) if kind is not None else get_kind("classification")
    splits, reports = {}, {}
    for split, path in (("train", train), ("dev", dev), ("test", test)):
        if path is None:
            continue
        rows, report = reader.read(path, columns, needs_labels=split != "test")
        splits[split], reports[split] = rows, report
    if how is None:
        kind, how = infer_kind(splits["train"], kind)
    spec = get_kind(kind)
    names, order = spec.label_names(splits["train"], labels)
    for split in ("dev", "test"):
        if split in splits:
            spec.check_labels(split, splits[split], names)
    splits = {split: spec.prepare(rows) for split, rows in splits.items()}
    task = Task(
        name or Path(train).stem,
        kind,
        tuple(names),
        spec.task_columns(columns),
        metrics=spec.metrics,
    )
    return task, splits, reports, f"{how}; {order}"


def _file_record(path) -> dict:
    path = Path(path)
    return {"path": str(path.absolute()), "bytes": path.stat().st_size, "sha256": digest(path)}


def finetune_files(
    init_spec: str,
    *,
    train,
    dev,
    test=None,
    columns: Columns | None = None,
    kind: str | None = None,
    labels=None,
    recipe: str | None = None,
    overrides=(),
    vocab_file: str | None = None,
    output_dir=None,
    progress=print,
) -> dict:
    """Fine-tunes on the user's files (see the module docstring); returns the report.

    The report is `finetune`'s plus `kind_decided` (how the kind and label order were
    chosen) and `data` (per file: rows read, rows skipped by reason and row number).
    """
    from electra_tf.finetuning.run import finetune

    columns = columns or Columns()
    name = Path(output_dir).name if output_dir else None
    task, splits, reports, how = user_task(train, dev, test, columns, kind, labels, name)
    config = load_finetune_recipe(recipe) if recipe else FinetuneConfig(task=task.name)
    config = config.override(*overrides)
    init = load_initialization(init_spec, vocab_file)
    data = {
        split: {
            **_file_record(path),
            "read": reports[split].read,
            "skipped": dict(reports[split].skipped),
            "skipped_rows": reports[split].skipped_rows,
        }
        for split, path in (("train", train), ("dev", dev), ("test", test))
        if path is not None
    }
    if progress:
        progress(f"[finetune] {task.name}: {task.kind} ({how}); labels {list(task.labels)}")
        for split, record in data.items():
            skipped = ", ".join(f"{n} {r}" for r, n in record["skipped"].items())
            progress(
                f"[finetune] {split}: {record['read']} rows"
                + (f", skipped {skipped}" if skipped else "")
            )
    request = {
        "data": {s: {k: r[k] for k in ("path", "bytes", "sha256")} for s, r in data.items()},
        "columns": dataclasses.asdict(columns),
        "kind": task.kind,
        "labels": list(task.labels),
    }
    output_dir = Path(output_dir or Path("runs") / f"finetune-{task.name}")
    report = finetune(task, init, splits, config, output_dir, progress, request=request)
    report.update(kind_decided=how, data=data)
    write_atomic(output_dir / "results.json", json.dumps(report, indent=2) + "\n")
    return report
