"""GLUE test-set predictions in the files the GLUE server takes (`SST-2.tsv`, `MNLI-m.tsv`, ...).

GLUE's test files have no labels: a header naming an index column (`index`, or
`id` for QQP) and the text columns the training files name. Each submission file
is `index<TAB>prediction` with a header line; the prediction is the label as the
task writes it ("0"/"1", "entailment", ...), a score clipped to [0, 5] for STS-B.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError
from electra_tf.datasets.readers import utf8_text
from electra_tf.datasets.tasks import Task

__all__ = ["SUBMISSION_FILES", "read_glue_test", "write_glue_submission"]

#: test file stem -> submission file, per task.
SUBMISSION_FILES = {
    "cola": {"test": "CoLA.tsv"},
    "sst2": {"test": "SST-2.tsv"},
    "mrpc": {"test": "MRPC.tsv"},
    "stsb": {"test": "STS-B.tsv"},
    "qqp": {"test": "QQP.tsv"},
    "mnli": {"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"},
    "qnli": {"test": "QNLI.tsv"},
    "rte": {"test": "RTE.tsv"},
}
_TEST_COLUMNS = {"cola": ("sentence", None)}  # CoLA's training files have no header


def read_glue_test(task: Task, path) -> tuple[list, list, list | None]:
    """(indices, texts, pair texts or None) of a GLUE test file."""
    path = Path(path)
    csv.field_size_limit(sys.maxsize)
    reader = csv.reader(io.StringIO(utf8_text(path), newline=""), delimiter="\t",
                        quoting=csv.QUOTE_NONE)  # fmt: skip
    header = next(reader, [])
    first, second = _TEST_COLUMNS.get(task.name, task.columns[:2])
    index_column = "index" if "index" in header else "id"
    for name in (index_column, first, second):
        if name is not None and name not in header:
            raise ConfigError(f"{path}, line 1: the header has no {name!r} column.")
    rows = [row for row in reader if len(row) >= len(header)]
    indices = [row[header.index(index_column)] for row in rows]
    texts = [row[header.index(first)] for row in rows]
    pairs = [row[header.index(second)] for row in rows] if second else None
    return indices, texts, pairs


def write_glue_submission(task: Task, model, data_dir, out_dir) -> list[Path]:
    """Writes the submission file of every GLUE test file of `task` found in `data_dir`."""
    written = []
    for stem, name in SUBMISSION_FILES.get(task.name, {}).items():
        path = Path(data_dir) / f"{stem}.tsv"
        if not path.exists():
            continue
        indices, texts, pairs = read_glue_test(task, path)
        outputs = model.predict((texts, pairs) if pairs is not None else texts, batch_size=128)
        if task.scored:
            low, high = task.score_range or (-np.inf, np.inf)
            values = np.clip(np.asarray(outputs).reshape(-1), low, high)
            predictions = [f"{v:.3f}" for v in values]
        else:
            predictions = [task.labels[i] for i in np.argmax(outputs, axis=-1)]
        target = Path(out_dir) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = zip(indices, predictions, strict=True)
        target.write_text("index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in rows))
        written.append(target)
    return written
