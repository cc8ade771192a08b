"""Reading SQuAD's official JSON (1.1 and 2.0), with one sentence for a malformed file.

`read_squad` gives `squad_example.SquadExample`s; `squad_questions` checks the layout and names
the article, paragraph or question that breaks it. Split from `electra_tf.datasets.squad`
(which re-exports both) to keep each module to one concern.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets.squad_example import squad_example

__all__ = ["read_squad", "squad_questions"]

_SQUAD_SHAPE = (
    'write it as SQuAD does: {"data": [{"paragraphs": [{"context": "...", "qas": [{"id": "...", '
    '"question": "...", "answers": [{"text": "...", "answer_start": 0}]}]}]}]}'
)


def _malformed(path, where: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}, {where}: {problem}; {_SQUAD_SHAPE}.")


def _list_of(value, path, where: str, key: str) -> list:
    """`value` (the `key` of `where`) when it is a list of JSON objects, else one sentence."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        got = type(value).__name__ if not isinstance(value, list) else "a list of other values"
        raise _malformed(path, where, f"{key!r} must be a list of objects, not {got}")
    return value


def _offset(value, path, where: str) -> int:
    """An answer's `answer_start` as an int (a whole number, or a string of digits)."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer():
        return int(value)
    raise _malformed(path, where, f"answer_start {value!r} is not a character offset")


def _squad_answers(qa: dict, path, where: str) -> tuple[list, int | None]:
    """(accepted texts, the first one's offset) of a SQuAD question (none when impossible)."""
    if qa.get("is_impossible", False):
        return [], None
    given = _list_of(qa.get("answers"), path, where, "answers")
    texts = []
    for answer in given:
        if not isinstance(answer.get("text"), str) or "answer_start" not in answer:
            raise _malformed(path, where, "an answer needs a 'text' string and an 'answer_start'")
        texts.append(answer["text"])
    return texts, (_offset(given[0]["answer_start"], path, where) if given else None)


def squad_questions(path, data) -> list:
    """((qid, question, context, answers, answer_start), ...) of a SQuAD file's `data`, or
    one sentence naming the file and the article, paragraph or question that is malformed.
    A question without `answers` (and not `is_impossible`) has None: the file has no answers
    (a test file), which is all or none of its questions."""
    if not isinstance(data, list):
        raise _malformed(path, "'data'", f"is {type(data).__name__}, not a list of articles")
    found = []
    for a, article in enumerate(data, 1):
        if not isinstance(article, dict):
            raise _malformed(path, f"article {a}", f"is {article!r}, not an object")
        paragraphs = _list_of(article.get("paragraphs", []), path, f"article {a}", "paragraphs")
        for p, paragraph in enumerate(paragraphs, 1):
            where = f"article {a}, paragraph {p}"
            context = paragraph.get("context")
            if not isinstance(context, str):
                raise _malformed(path, where, f"its context is {context!r}, not a string")
            for q, qa in enumerate(_list_of(paragraph.get("qas", []), path, where, "qas"), 1):
                if not isinstance(qa.get("id"), str | int) or not isinstance(
                    qa.get("question"), str
                ):
                    raise _malformed(
                        path, f"{where}, question {q}", "a question needs an 'id' and a 'question'"
                    )
                named = f"question {qa['id']!r}"
                if "answers" not in qa and not qa.get("is_impossible", False):
                    answers, start = None, None
                else:
                    answers, start = _squad_answers(qa, path, named)
                found.append((str(qa["id"]), qa["question"], context, answers, start))
    labelled = [answers is not None for *_, answers, _ in found]
    if any(labelled) and not all(labelled):
        qid = found[labelled.index(False)][0]
        raise _malformed(path, f"question {qid!r}", "it has no 'answers' while others have")
    return found


def read_squad(path, version_2: bool | None = None, report: collections.Counter | None = None):
    """Examples of a SQuAD JSON file (1.1 or 2.0).

    Answers that do not occur at their `answer_start` are skipped (the question
    is kept for evaluation) and counted in `report["answers_not_in_context"]`. A file
    whose questions have no `answers` at all (a test file) gives unlabelled examples
    (`labelled` False). A file not laid out as SQuAD's is refused in one sentence naming
    the article or question.
    """
    path = Path(path)
    report = report if report is not None else collections.Counter()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{path} is not a SQuAD JSON file ({error}).") from None
    examples = []
    for number, (qid, question, context, answers, start) in enumerate(
        squad_questions(path, data), 1
    ):
        example, problem = squad_example(qid, question, context, answers or [], start)
        example.labelled, example.row = answers is not None, number
        if problem:
            report[problem] += 1
            report[f"skipped:{qid}"] += 1
        if version_2 is False and answers == []:
            report["impossible_in_v1"] += 1
            continue
        examples.append(example)
    return examples
