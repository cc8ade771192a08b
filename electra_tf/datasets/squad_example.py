"""One SQuAD question as the readers hand it on: `SquadExample` and `squad_example`.

The context is split on whitespace into words with their character offsets (as BERT's
`run_squad.py` does), and the training answer is located in words. Its own module, below both
`squad_json` (the file reader) and `squad` (features and answers), so neither imports the other
to build an example.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["SquadExample", "squad_example"]


@dataclasses.dataclass
class SquadExample:
    qid: str
    question: str
    words: list  # the context split on whitespace
    word_offsets: list  # (start, end) character offsets of each word
    context: str
    answers: list  # gold answer texts (empty: unanswerable)
    start_word: int = -1  # the training answer's first and last word (-1: none)
    end_word: int = -1
    labelled: bool = True  # False: a file without answers (predicted, never scored)
    row: int | None = None  # its row in a table, or its place among a SQuAD file's questions


def _split_words(context: str):
    words, offsets, start = [], [], None
    for i, char in enumerate(context + " "):
        if char.isspace() or char == "\u202f":
            if start is not None:
                words.append(context[start:i])
                offsets.append((start, i))
                start = None
        elif start is None:
            start = i
    return words, offsets


def squad_example(qid, question: str, context: str, answers=(), answer_start=None):
    """A `SquadExample` of strings, and None or why its training answer cannot be used.

    `answers` are the gold texts (none: unanswerable). The first is the training answer:
    it starts at character `answer_start` of the context, or, when that is None, at its
    first occurrence. An answer that is not at its offset (or not in the context) keeps the
    question for scoring, without a training span.
    """
    words, offsets = _split_words(context)
    answers = [str(a) for a in answers]
    example = SquadExample(str(qid), question.strip(), words, offsets, context, answers)
    if not answers:
        return example, None
    text = answers[0]
    begin = context.find(text) if answer_start is None else int(answer_start)
    if begin < 0 or not text.strip() or context[begin : begin + len(text)] != text:
        return example, "answers_not_in_context"
    starts = [s for s, _ in offsets]
    end_char = begin + len(text.rstrip()) - 1
    begin += len(text) - len(text.lstrip())
    example.start_word = int(np.searchsorted(starts, begin, side="right") - 1)
    example.end_word = int(np.searchsorted(starts, end_char, side="right") - 1)
    return example, None
