"""Your own labelled files: CSV, TSV and JSON Lines tables, read by column name.

`read_table(path, columns)` reads one split. The format comes from the
extension (`.csv`; `.tsv`/`.tab`; `.jsonl`/`.ndjson`/`.json`) or from
`columns.format`. Text is UTF-8 (a byte-order mark is dropped). What cannot be
used fails with one sentence naming the file, row and what to do (a missing
column, an empty file, a byte that is not UTF-8, a file whose content is of
another format than its extension); rows that merely cannot be used are
skipped and counted by reason, with their row numbers (`ReadReport`):
malformed rows (a CSV row with too few fields, a JSON line that is not an
object), empty texts (a blank or whitespace-only row of a table too: `predict`
writes an error line for it, one output line per input row; blank lines at the
end of a file are no rows), and (in training files) empty labels. Row numbers
count the file's lines from 1, the header included.

Labels are read as they are written: strings (class names), lists of strings
(multi-label, a JSON list or a delimited CSV cell) or numbers; the task's
kind (`electra_tf.tasks.kind.infer_kind`) decides what they mean.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sys
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets.readers import Example, ReadReport, utf8_text

__all__ = [
    "Columns",
    "read_table",
    "read_records",
    "table_format",
    "EXTENSIONS",
]

EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".conll": "conll",
    ".bio": "conll",
    ".iob": "conll",
}


@dataclasses.dataclass(frozen=True)
class Columns:
    """Where a table's fields are.

    Attributes:
        text: the text column.
        text_pair: the second text of pair tasks, or None.
        label: the label column (a test file may lack it: then nothing is scored).
        format: "csv", "tsv", "jsonl" or "conll"; None: from the file's extension.
        label_delimiter: splits a CSV/TSV label cell into several labels (multi-label).
        question, context, answer, answer_start: question answering's columns: the question,
            the passage, the answer text (a string, a list of accepted answers, or SQuAD's
            `{"text": [...], "answer_start": [...]}`; empty: unanswerable) and its character
            offset in the context (optional: the first occurrence otherwise).
    """

    text: str = "text"
    text_pair: str | None = None
    label: str = "label"
    format: str | None = None
    label_delimiter: str | None = None
    question: str = "question"
    context: str = "context"
    answer: str = "answers"
    answer_start: str = "answer_start"


def table_format(path, declared: str | None = None) -> str:
    """The format of `path`: `declared`, else by its extension (one sentence if unknown)."""
    if declared:
        if declared not in set(EXTENSIONS.values()):
            raise ConfigError(f"Unknown --format {declared!r}: choose csv, tsv, jsonl or conll.")
        return declared
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        raise ConfigError(
            f"{path}: cannot tell its format from the extension {suffix or '(none)'!r}; "
            "pass --format csv, tsv, jsonl or conll."
        )
    return EXTENSIONS[suffix]


def _check_content(path, text: str, kind: str) -> None:
    """Refuses a file whose first line is plainly of another format than `kind`."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    looks_json = first.lstrip().startswith("{")
    if kind in ("csv", "tsv") and looks_json:
        raise ConfigError(
            f"{path} looks like JSON Lines (its first line starts with '{{'), not {kind.upper()}; "
            "rename it .jsonl or pass --format jsonl."
        )
    if kind == "jsonl" and first and not looks_json:
        guess = "tsv" if "\t" in first else "csv"
        raise ConfigError(
            f"{path}, line 1 is not a JSON object, so the file is not JSON Lines; "
            f"rename it or pass --format {guess}."
        )
    if kind == "csv" and "\t" in first and "," not in first:
        raise ConfigError(
            f"{path} looks tab-separated (its header has tabs and no commas); rename it .tsv or "
            "pass --format tsv."
        )


def _cell_label(raw, delimiter):
    if raw is None:
        return None
    if isinstance(raw, list):
        return [str(v).strip() for v in raw if str(v).strip()]
    if isinstance(raw, bool):
        return str(raw).lower()
    if isinstance(raw, int | float):
        return raw
    raw = str(raw).strip()
    if delimiter:
        return [part.strip() for part in raw.split(delimiter) if part.strip()]
    return raw


def _json_records(text: str, report: ReadReport):
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            _skip(report, "malformed_rows", number)
            continue
        yield number, record


def _table_records(path, text: str, kind: str, wanted: list, report: ReadReport):
    csv.field_size_limit(sys.maxsize)
    text = text.rstrip("\r\n")  # blank lines at the end are no rows; any other line is one
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if kind == "tsv" else ",")
    header = [name.strip() for name in next(reader, [])]
    absent = [c for c in wanted if c not in header]
    if absent:
        raise ConfigError(
            f"{path} has no column {absent[0]!r} (its columns: {', '.join(header)}); pass "
            "--text-column, --text-pair-column or --label-column (question answering: "
            "--question-column, --context-column, --answer-column) with one of them."
        )
    for number, row in enumerate(reader, 2):
        if not row:  # a blank line: an empty text in a one-column file, a row all the same
            row = [""] * len(header)
        if len(row) < len(header):
            _skip(report, "malformed_rows", number)
            continue
        yield number, dict(zip(header, row, strict=False))


def _skip(report: ReadReport, reason: str, row: int) -> None:
    report.skipped[reason] += 1
    report.skipped_rows.setdefault(reason, []).append(row)


def _example(path: Path, number: int, record: dict, columns: Columns, report, needs_labels):
    """The row's `Example`, or None (counted in `report`) when it cannot be used."""
    missing = [c for c in (columns.text, columns.text_pair) if c and c not in record]
    if missing:
        _skip(report, "missing_fields", number)
        return None
    text_a = str(record[columns.text] or "").strip()
    text_b = str(record[columns.text_pair] or "").strip() if columns.text_pair else None
    if not text_a or (columns.text_pair and not text_b):
        _skip(report, "empty_text", number)
        return None
    label = _cell_label(record.get(columns.label), columns.label_delimiter)
    if needs_labels and (label is None or label == "" or label == []):
        _skip(report, "empty_label", number)
        return None
    return Example(text_a, text_b, label, f"{path.name}:{number}")


def _table_text(path, columns: Columns) -> tuple[str, str]:
    """(format, text) of a CSV/TSV/JSONL file that exists, is not empty and looks like it."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path} does not exist.")
    kind = table_format(path, columns.format)
    if kind == "conll":
        raise ConfigError(f"{path} is a CoNLL file; tagging reads it (--kind tagging).")
    text = utf8_text(path).removeprefix("\ufeff")
    if not text.strip():
        raise ConfigError(f"{path} is empty.")
    _check_content(path, text, kind)
    return kind, text


def read_records(path, columns: Columns, wanted: list) -> tuple[list, ReadReport]:
    """((row number, {field: value}) of each row, report) of a CSV/TSV/JSONL file whose
    header (CSV/TSV) must hold the `wanted` columns; malformed rows are skipped and counted."""
    path = Path(path)
    kind, text = _table_text(path, columns)
    report = ReadReport()
    if kind == "jsonl":
        return list(_json_records(text, report)), report
    return list(_table_records(path, text, kind, wanted, report)), report


def read_table(path, columns: Columns, needs_labels: bool = True) -> tuple[list, ReadReport]:
    """The `Example`s of one CSV/TSV/JSONL file, and what was skipped.

    Args:
        path: the file.
        columns: where the fields are (see `Columns`).
        needs_labels: whether every row must have a label (training and dev files);
            a test file without the label column is read for predictions only.

    Returns:
        (examples, report): examples carry the raw label (a string, a list of strings
        or a number; None when the file has no label column).
    """
    path = Path(path)
    kind, text = _table_text(path, columns)
    report = ReadReport()
    wanted = [c for c in (columns.text, columns.text_pair) if c]
    if kind == "jsonl":
        records = list(_json_records(text, report))
        has_label = any(columns.label in record for _, record in records)
    else:
        header = next(
            csv.reader(io.StringIO(text, newline=""), delimiter="\t" if kind == "tsv" else ",")
        )
        has_label = columns.label in [name.strip() for name in header]
        records = _table_records(
            path, text, kind, wanted + ([columns.label] if needs_labels else []), report
        )
    if needs_labels and not has_label and kind == "jsonl":  # tables: said by the header check
        raise ConfigError(f"{path} has no {columns.label!r} field; pass --label-column.")
    examples = [
        example
        for number, record in records
        if (example := _example(path, number, record, columns, report, needs_labels and has_label))
    ]
    if not examples:
        reasons = ", ".join(f"{n} {r}" for r, n in report.skipped.items()) or "no rows"
        raise ConfigError(f"{path} holds no usable rows ({reasons}).")
    report.read = len(examples)
    return examples, report
