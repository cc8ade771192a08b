"""Reading question-answering files: SQuAD JSON and tables of questions (CSV/TSV/JSONL).

The readers of `question_answering.QuestionAnswering`, split from it to keep each
module to one concern: which files are questions, their answers and offsets, unique
ids, and the one sentence a malformed file gets (see that module's docstring).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets import squad

__all__ = ["is_squad_json", "is_question_table", "trainable", "read_squad_file",
           "table_questions", "read_questions"]  # fmt: skip


def is_squad_json(path: Path) -> bool:
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and b'"data"' in head and b"\n{" not in head[1:]


def is_question_table(path: Path, columns) -> bool:
    """Whether a CSV/TSV/JSON Lines file's header (its first row) has the question and the
    context columns and no text column: a table of questions."""
    import csv

    from electra_tf.datasets.files import table_format

    try:
        kind = table_format(path, columns.format)
        with open(path, encoding="utf-8-sig", newline="") as handle:
            first = next((line for line in handle if line.strip()), "")
        if kind == "jsonl":
            names = list(json.loads(first))
        elif kind in ("csv", "tsv"):
            names = [n.strip() for n in next(csv.reader([first], delimiter="\t" if kind == "tsv"
                                                         else ","), [])]  # fmt: skip
        else:
            return False
    except (ConfigError, OSError, ValueError, TypeError):
        return False  # the reader says what is wrong with it
    return columns.question in names and columns.context in names and columns.text not in names


def trainable(task, rows: list) -> list:
    """The training questions with a usable answer (or none); refused when none is left."""
    kept = [e for e in rows if not e.answers or e.start_word >= 0]
    if rows and not kept:
        table = all(e.qid.endswith(f":{e.row}") for e in rows)  # ids made of row numbers
        lost = [str(e.row) if table else repr(e.qid) for e in rows]
        shown = ", ".join(lost[:8]) + (", ..." if len(lost) > 8 else "")
        raise ConfigError(
            f"No training question of {task.name} has its answer in its context "
            f"(answers_not_in_context: {'rows' if table else 'questions'} {shown}); check "
            "the answer column and its answer_start offsets."
        )
    return kept


def _offset(value, where: str, column: str) -> int:
    """A character offset of a cell (a whole number, or its text), or one sentence."""
    try:
        number = float(value)
        if number.is_integer() and not isinstance(value, bool):
            return int(number)
    except (TypeError, ValueError):
        pass
    raise ConfigError(f"{where}: {column} {value!r} is not a character offset.")


def _answers(value, where: str) -> tuple[list, int | None]:
    """(accepted texts, the first one's character offset or None) of an answer cell: a text,
    a list of texts or of SQuAD's `{"text", "answer_start"}`, or SQuAD's
    `{"text": [...], "answer_start": [...]}`; `where` names the row in a refusal."""
    if value is None:
        return [], None
    if isinstance(value, dict):  # SQuAD / Hugging Face datasets: {"text": [...], ...}
        texts = value.get("text") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        starts = value.get("answer_start")
        starts = [starts] if not isinstance(starts, list | tuple) else list(starts)
        starts = [s for s in starts if s is not None]
        start = _offset(starts[0], where, "answer_start") if starts and texts else None
        return [str(t) for t in texts if str(t)], start
    if isinstance(value, list):
        texts, start = [], None
        for item in value:
            if isinstance(item, dict):  # SQuAD's answers: [{"text", "answer_start"}, ...]
                if not isinstance(item.get("text"), str):
                    raise ConfigError(
                        f"{where}: an answer {item!r} has no 'text'; write each as "
                        '{"text": "...", "answer_start": 0}, or the answer texts alone.'
                    )
                if not texts and item.get("answer_start") is not None:
                    start = _offset(item["answer_start"], where, "answer_start")
                item = item["text"]
            if str(item):
                texts.append(str(item))
        return texts, start
    return ([str(value)] if str(value) else []), None


def _refuse_repeated_ids(path: Path, examples, what: str) -> None:
    """One sentence naming the first id that two questions of the file share, and where."""
    seen = {}
    for example in examples:
        if example.qid in seen:
            raise ConfigError(
                f"{path}: question id {example.qid!r} is used by {what} {seen[example.qid]} "
                f"and {example.row}; give every question its own id (answers and scores are "
                "kept by id)."
            )
        seen[example.qid] = example.row


def read_squad_file(path: Path, needs_labels: bool):
    """(examples, report) of a SQuAD JSON file; refused when answers are needed and none
    are given."""
    from electra_tf.datasets.readers import ReadReport

    report, counts = ReadReport(), collections.Counter()
    examples = squad.read_squad(path, report=counts)
    if needs_labels and examples and not examples[0].labelled:
        raise ConfigError(
            f"{path} has no answers (its questions have no 'answers'); give train and dev "
            "files with answers (a file without them can only be --test, and is then only "
            "predicted)."
        )
    skipped = [key.split(":", 1)[1] for key in counts if key.startswith("skipped:")]
    if skipped and needs_labels:
        report.skipped["answers_not_in_context"] = len(skipped)
        report.skipped_rows["answers_not_in_context"] = skipped
    _refuse_repeated_ids(path, examples, "questions")
    report.read = len(examples)
    return examples, report


def _answer_column(path: Path, records, columns, needs_labels: bool) -> bool:
    """Whether the table has its answer column; refused in one sentence when answers are
    needed (train and dev) and it has none: never read every question as unanswerable."""
    found = list(dict.fromkeys(key for _, record in records for key in record))
    if columns.answer in found:
        return True
    if needs_labels:
        raise ConfigError(
            f"{path} has no answer column {columns.answer!r} (its columns: {', '.join(found)}); "
            "name it with --answer-column (an empty answer marks an unanswerable question); a "
            "file without answers can only be --test, and is then only predicted."
        )
    return False


def table_questions(path, columns, needs_labels: bool):
    """(examples, report, {row: id} of the rows with an `id`) of a CSV/TSV/JSONL table."""
    from electra_tf.datasets.files import read_records

    records, report = read_records(path, columns, [columns.question, columns.context])
    labelled = _answer_column(path, records, columns, needs_labels)
    examples, ids = [], {}
    for number, record in records:
        where = f"{path}, row {number}"
        if record.get("id") not in (None, ""):
            ids[number] = str(record["id"])
        question = str(record.get(columns.question) or "").strip()
        context = str(record.get(columns.context) or "")
        if not question or not context.strip():
            report.skipped["empty_text"] += 1
            report.skipped_rows.setdefault("empty_text", []).append(number)
            continue
        if labelled and needs_labels and columns.answer not in record:
            raise ConfigError(
                f'{where} has no {columns.answer!r} while other rows have; give it [] or "" '
                "for an unanswerable question."
            )
        answers, start = _answers(record.get(columns.answer), where) if labelled else ([], None)
        if start is None and answers and record.get(columns.answer_start) not in (None, ""):
            start = _offset(record[columns.answer_start], where, columns.answer_start)
        qid = ids.get(number, f"{path.name}:{number}")
        example, problem = squad.squad_example(qid, question, context, answers, start)
        example.labelled, example.row = labelled, number
        if problem and needs_labels:
            report.skipped[problem] += 1
            report.skipped_rows.setdefault(problem, []).append(number)
        examples.append(example)
    if not examples:
        raise ConfigError(f"{path} holds no usable questions.")
    _refuse_repeated_ids(path, examples, "rows")
    report.read = len(examples)
    return examples, report, ids


def read_questions(path, columns, needs_labels: bool = True):
    """(`SquadExample`s, `ReadReport`) of a SQuAD JSON file or a table of questions.

    `needs_labels` (train and dev): the file must give answers (its answer column, or SQuAD's
    `answers`); else a file without them gives unlabelled examples (`labelled` False), only
    predicted. Question ids must be unique within a file.
    """
    path = Path(path)
    if is_squad_json(path):
        return read_squad_file(path, needs_labels)
    examples, report, _ = table_questions(path, columns, needs_labels)
    return examples, report
