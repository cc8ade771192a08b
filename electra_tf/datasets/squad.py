"""SQuAD 1.1 and 2.0: reading the official JSON, windowed features, training, answer mapping.

Reading follows BERT's `run_squad.py`: the context is split on whitespace
into words with their character offsets, each word is WordPiece-tokenized,
and long contexts become windows of `max_seq_length` tokens sliding by
`doc_stride` (`[CLS] question [SEP] window [SEP]`, the question cut to
`max_query_length` tokens). A token keeps the answer only in the window where
it has the most context. An answer whose text does not occur at its
`answer_start` in the context is skipped and counted (with its question id).

Prediction: for each question, over its windows, the `n_best` starts and
ends give candidate spans (inside the window's context part, end >= start,
at most `max_answer_length` tokens); the best by start + end logit is mapped
back to the original words. For SQuAD 2.0 the answerability classifier on
[CLS] decides: a question is unanswerable when its best window's answerable
logit is below 0. With the joint head, each of the `beam_size` best starts is
paired with its own end logits.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import string
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError

__all__ = [
    "SquadExample",
    "read_squad",
    "SquadFeatures",
    "make_features",
    "best_spans",
    "predict_answers",
]


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


def read_squad(path, version_2: bool | None = None, report: collections.Counter | None = None):
    """Examples of a SQuAD JSON file (1.1 or 2.0).

    Answers that do not occur at their `answer_start` are skipped (the question
    is kept for evaluation) and counted in `report["answers_not_in_context"]`.
    """
    path = Path(path)
    report = report if report is not None else collections.Counter()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (OSError, ValueError, KeyError) as error:
        raise ConfigError(f"{path} is not a SQuAD JSON file ({error}).") from None
    examples = []
    for article in data:
        for paragraph in article.get("paragraphs", []):
            context = paragraph["context"]
            words, offsets = _split_words(context)
            starts = [s for s, _ in offsets]
            for qa in paragraph.get("qas", []):
                impossible = bool(qa.get("is_impossible", False))
                answers = [] if impossible else [a["text"] for a in qa.get("answers", [])]
                example = SquadExample(
                    qa["id"], qa["question"].strip(), words, offsets, context, answers
                )
                if answers:
                    first = qa["answers"][0]
                    begin, text = int(first["answer_start"]), first["text"]
                    if context[begin : begin + len(text)] != text:
                        report["answers_not_in_context"] += 1
                        report[f"skipped:{qa['id']}"] += 1
                    else:
                        end_char = begin + len(text) - 1
                        example.start_word = int(np.searchsorted(starts, begin, side="right") - 1)
                        example.end_word = int(np.searchsorted(starts, end_char, side="right") - 1)
                if version_2 is False and impossible:
                    report["impossible_in_v1"] += 1
                    continue
                examples.append(example)
    return examples


@dataclasses.dataclass
class SquadFeatures:
    """Window features (numpy) and what maps them back to examples and words."""

    inputs: dict  # token_ids, padding_mask, segment_ids: int32 [W, S]
    start_positions: np.ndarray  # [W] (0 = [CLS] when the answer is not in the window)
    end_positions: np.ndarray
    answerable: np.ndarray  # [W] float 1/0
    example_index: np.ndarray  # [W]
    token_to_word: list  # per window: {token position: word index}
    max_context: list  # per window: {token position: bool}


def make_features(examples, tokenizer, max_seq_length=384, doc_stride=128, max_query_length=64):
    """Windowed features of SQuAD examples (see the module docstring)."""
    cls, sep, pad = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    rows = collections.defaultdict(list)
    token_to_word, max_context = [], []
    for index, example in enumerate(examples):
        query = tokenizer.tokenize([example.question]).to_list()[0][:max_query_length]
        pieces = tokenizer.tokenize(example.words).to_list() if example.words else []
        word_of_piece, doc = [], []
        first_piece_of_word = []
        for w, word_pieces in enumerate(pieces):
            first_piece_of_word.append(len(doc))
            for piece in word_pieces:
                word_of_piece.append(w)
                doc.append(piece)
        start_piece = end_piece = None
        if example.start_word >= 0 and first_piece_of_word:
            start_piece = first_piece_of_word[example.start_word]
            last = example.end_word + 1
            end_piece = (
                (first_piece_of_word[last] - 1) if last < len(first_piece_of_word) else len(doc) - 1
            )
            start_piece, end_piece = _improve_span(
                doc, start_piece, end_piece, tokenizer.tokenize([example.answers[0]]).to_list()[0]
            )
        room = max_seq_length - len(query) - 3
        if room <= 0:
            raise ConfigError(
                "max_query_length leaves no room for the context; raise max_seq_length."
            )
        spans, offset = [], 0
        while True:
            length = min(len(doc) - offset, room)
            spans.append((offset, length))
            if offset + length >= len(doc):
                break
            offset += min(length, doc_stride)
        for span_start, span_length in spans:
            ids = [cls, *query, sep]
            segments = [0] * len(ids)
            mapping, context_flags = {}, {}
            for i in range(span_length):
                piece = span_start + i
                position = len(ids)
                mapping[position] = word_of_piece[piece]
                context_flags[position] = _has_max_context(spans, piece, span_start, span_length)
                ids.append(doc[piece])
                segments.append(1)
            ids.append(sep)
            segments.append(1)
            mask = [1] * len(ids)
            padding = max_seq_length - len(ids)
            rows["token_ids"].append(ids + [pad] * padding)
            rows["padding_mask"].append(mask + [0] * padding)
            rows["segment_ids"].append(segments + [0] * padding)
            inside = (
                start_piece is not None
                and span_start <= start_piece
                and end_piece < span_start + span_length
            )
            offset_in_input = len(query) + 2 - span_start
            rows["start"].append(start_piece + offset_in_input if inside else 0)
            rows["end"].append(end_piece + offset_in_input if inside else 0)
            rows["answerable"].append(1.0 if inside else 0.0)
            rows["example"].append(index)
            token_to_word.append(mapping)
            max_context.append(context_flags)
    inputs = {
        k: np.asarray(rows[k], np.int32).reshape(-1, max_seq_length)
        for k in ("token_ids", "padding_mask", "segment_ids")
    }
    return SquadFeatures(
        inputs,
        np.asarray(rows["start"], np.int32),
        np.asarray(rows["end"], np.int32),
        np.asarray(rows["answerable"], np.float32),
        np.asarray(rows["example"], np.int32),
        token_to_word,
        max_context,
    )


def _improve_span(doc, start, end, answer):
    """The sub-span of doc[start..end] equal to the answer's tokens (BERT's
    `_improve_answer_span`: "Clara." is two pieces, the answer "Clara" one)."""
    for new_start in range(start, end + 1):
        for new_end in range(end, new_start - 1, -1):
            if doc[new_start : new_end + 1] == answer:
                return new_start, new_end
    return start, end


def _has_max_context(spans, piece, span_start, span_length) -> bool:
    """Whether this window gives `piece` the most context (BERT's rule)."""
    best_score, best_start = None, None
    for start, length in spans:
        end = start + length - 1
        if piece < start or piece > end:
            continue
        score = min(piece - start, end - piece) + 0.01 * length
        if best_score is None or score > best_score:
            best_score, best_start = score, start
    return best_start == span_start


def best_spans(
    start_logits,
    end_logits,
    token_to_word,
    max_context,
    n_best=20,
    max_answer_length=30,
    start_candidates=None,
):
    """Candidate spans of one window as (score, start token, end token), best first.

    `end_logits` is `[S]`, or `[K, S]` with `start_candidates` `[K]` for the joint head.
    """
    candidates = []
    if start_candidates is None:
        starts = np.argsort(start_logits)[::-1][:n_best]
        ends = np.argsort(end_logits)[::-1][:n_best]
        pairs = [(s, e, start_logits[s] + end_logits[e]) for s in starts for e in ends]
    else:
        pairs = []
        for k, s in enumerate(start_candidates):
            for e in np.argsort(end_logits[k])[::-1][:n_best]:
                pairs.append((s, e, start_logits[s] + end_logits[k][e]))
    for s, e, value in pairs:
        s, e = int(s), int(e)
        if s not in token_to_word or e not in token_to_word or e < s:
            continue
        if e - s + 1 > max_answer_length or not max_context.get(s, False):
            continue
        candidates.append((float(value), s, e))
    return sorted(candidates, reverse=True)


def _answer_text(example: SquadExample, first_word: int, last_word: int) -> str:
    begin = example.word_offsets[first_word][0]
    end = example.word_offsets[last_word][1]
    text = example.context[begin:end]
    return text.strip(string.whitespace + ".,;:!?\"'()[]{}") or text


def predict_answers(
    examples,
    features: SquadFeatures,
    outputs: dict,
    version_2: bool,
    n_best=20,
    max_answer_length=30,
) -> dict:
    """Question id -> predicted text ("" for no answer) from the model's window outputs."""
    by_example = collections.defaultdict(list)
    for w, index in enumerate(features.example_index):
        by_example[int(index)].append(w)
    answers = {}
    for index, example in enumerate(examples):
        best, best_answerable = None, -np.inf
        for w in by_example.get(index, []):
            candidates = best_spans(
                outputs["start_logits"][w],
                outputs["end_logits"][w],
                features.token_to_word[w],
                features.max_context[w],
                n_best,
                max_answer_length,
                outputs["start_candidates"][w] if "start_candidates" in outputs else None,
            )
            best_answerable = max(best_answerable, float(outputs["answerable_logits"][w]))
            if candidates and (best is None or candidates[0][0] > best[0]):
                best = (candidates[0][0], w, candidates[0][1], candidates[0][2])
        if best is None or (version_2 and best_answerable < 0.0):
            answers[example.qid] = ""
            continue
        _, w, s, e = best
        mapping = features.token_to_word[w]
        answers[example.qid] = _answer_text(example, mapping[s], mapping[e])
    return answers
