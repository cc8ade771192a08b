"""SQuAD 1.1 and 2.0: reading the official JSON, windowed features, training, answer mapping.

Reading follows BERT's `run_squad.py`: the context is split on whitespace
into words with their character offsets, each word is WordPiece-tokenized,
and long contexts become windows of `max_seq_length` tokens sliding by
`doc_stride` (`[CLS] question [SEP] window [SEP]`, the question cut to
`max_query_length` tokens, and to `max_seq_length - 4` at most: `query_limit`). A token
keeps the answer only in the window where it has the most context. An answer whose text
does not occur at its `answer_start` in the context is skipped and counted (with its
question id).

Prediction: for each question, over its windows, the `n_best` starts and
ends give candidate spans (inside the window's context part, end >= start,
at most `max_answer_length` tokens); the best by start + end logit is mapped
back to the original words. For SQuAD 2.0 the answerability classifier on
[CLS] decides: a question is unanswerable when its best window's answerable
logit is below the threshold chosen on dev (`best_threshold`), or, under transformers' rule
(`no_answer="null_score"`), when its best span's score minus its null score is. With the joint head,
each of the `beam_size` best starts is paired with its own end logits.
"""

from __future__ import annotations

import collections
import dataclasses
import string

import numpy as np

from electra_tf.config import ConfigError
from electra_tf.datasets.squad_example import SquadExample, squad_example
from electra_tf.datasets.squad_json import read_squad, squad_questions

__all__ = [
    "SquadExample", "squad_example", "read_squad", "SquadFeatures", "make_features",
    "best_spans", "answer_details", "null_scores", "with_threshold", "best_threshold",
    "predict_answers",
    "check_query_room", "query_limit", "squad_questions",
]  # fmt: skip

_STRIPPED = string.whitespace + ".,;:!?\"'()[]{}"


#: How a SQuAD file is laid out, for the sentence that refuses another layout.
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


#: Examples whose distinct strings (questions, context words, answers) go through the
#: tokenizer in one call: one eager call per example cost ~24 ms (45 s for 1,900).
TOKENIZE_BLOCK = 512


def _block_ids(tokenizer, examples) -> dict:
    """Each distinct question, context word and first answer of `examples` -> its ids."""
    texts = {e.question for e in examples}
    for example in examples:
        texts.update(example.words)
        texts.update(example.answers[:1])
    texts = sorted(texts)
    ids = tokenizer.tokenize(texts).to_list() if texts else []
    return dict(zip(texts, ids, strict=True))


def check_query_room(max_seq_length: int, max_query_length: int) -> None:
    """Refuses a question part that leaves a window (`[CLS] question [SEP] context [SEP]`)
    no room for the context, in one sentence (fine-tuning settings)."""
    if max_query_length > max_seq_length - 4:
        raise ConfigError(
            f"max_query_length {max_query_length} leaves no room for the context in windows "
            f"of max_seq_length {max_seq_length} ([CLS] question [SEP] context [SEP]); set "
            f"--max-query-length to at most {max_seq_length - 4} (e.g. "
            f"{max(1, max_seq_length // 4)}) or raise --max-seq-length."
        )


def query_limit(max_seq_length: int, max_query_length: int) -> int:
    """The WordPieces a question keeps: `max_query_length`, and never so many that a window
    has no room for the context (a model saved before `check_query_room` refused such a
    setting still answers a long question, cut, as the SavedModel cuts it).

    >>> query_limit(384, 64), query_limit(64, 64)
    (64, 60)
    """
    return max(0, min(int(max_query_length), int(max_seq_length) - 4))


def make_features(examples, tokenizer, max_seq_length=384, doc_stride=128, max_query_length=64):
    """Windowed features of SQuAD examples (see the module docstring)."""
    cls, sep, pad = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    rows = collections.defaultdict(list)
    token_to_word, max_context = [], []
    limit = query_limit(max_seq_length, max_query_length)
    for index, example in enumerate(examples):
        if index % TOKENIZE_BLOCK == 0:
            ids_of = _block_ids(tokenizer, examples[index : index + TOKENIZE_BLOCK])
        query = ids_of[example.question][:limit]
        pieces = [ids_of[word] for word in example.words]
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
                doc, start_piece, end_piece, ids_of[example.answers[0]]
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
        most = _most_context(spans, len(doc))
        for span_start, span_length in spans:
            ids = [cls, *query, sep]
            segments = [0] * len(ids)
            mapping, context_flags = {}, {}
            for i in range(span_length):
                piece = span_start + i
                position = len(ids)
                mapping[position] = word_of_piece[piece]
                context_flags[position] = most[piece] == span_start
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


def _most_context(spans, pieces: int) -> list:
    """For each piece, the start of the window that gives it the most context (BERT's rule:
    `min(left, right) + 0.01 * length`, the first window winning ties). Each window is
    visited once over its own pieces: linear in the context, not in windows times pieces."""
    best, score = [None] * pieces, [None] * pieces
    for start, length in spans:
        end = start + length - 1
        for piece in range(start, end + 1):
            value = min(piece - start, end - piece) + 0.01 * length
            if score[piece] is None or value > score[piece]:
                score[piece], best[piece] = value, start
    return best


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


def _answer_span(example: SquadExample, first_word: int, last_word: int) -> tuple[str, int, int]:
    """(text, start, end) of words `first_word..last_word` in the context, outer punctuation
    stripped (kept when nothing else is left): `context[start:end] == text`."""
    begin = example.word_offsets[first_word][0]
    end = example.word_offsets[last_word][1]
    b, e = begin, end
    while b < e and example.context[b] in _STRIPPED:
        b += 1
    while e > b and example.context[e - 1] in _STRIPPED:
        e -= 1
    if b == e:
        b, e = begin, end
    return example.context[b:e], b, e


def _log_softmax(logits) -> np.ndarray:
    logits = np.asarray(logits, np.float64)
    top = logits.max(-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))


#: The best span score of a question without any candidate span (the null-score rule).
NO_SPAN = -1e9


def answer_details(
    examples,
    features: SquadFeatures,
    outputs: dict,
    version_2: bool,
    n_best=20,
    max_answer_length=30,
    threshold: float = 0.0,
    no_answer: str = "answerability",
) -> dict:
    """Question id -> its answer from the model's window outputs.

    Each answer is a dict: `answer` (text, "" for no answer), `start` and `end` (character
    offsets into the context, `context[start:end] == answer`; 0 and 0 for no answer),
    `score` (the span's start probability times its end probability in its window),
    `no_answer` (SQuAD 2.0: the sigmoid of minus the best window's answerable logit; 0.0
    for 1.1), and `span` (the best span's (text, start, end) even when unanswered) and
    `answerable_logit` for choosing the threshold (`best_threshold`). Under SQuAD 2.0 a
    question is answered when its best answerable logit is at least `threshold`.
    With `no_answer="null_score"` (transformers' rule) that logit is instead the best
    span's score minus the question's smallest null score (`null_scores`).
    """
    by_example = collections.defaultdict(list)
    for w, index in enumerate(features.example_index):
        by_example[int(index)].append(w)
    details = {}
    for index, example in enumerate(examples):
        best, best_answerable = None, -np.inf
        for w in by_example.get(index, []):
            starts = outputs["start_candidates"][w] if "start_candidates" in outputs else None
            candidates = best_spans(
                outputs["start_logits"][w],
                outputs["end_logits"][w],
                features.token_to_word[w],
                features.max_context[w],
                n_best,
                max_answer_length,
                starts,
            )
            best_answerable = max(best_answerable, float(outputs["answerable_logits"][w]))
            if candidates and (best is None or candidates[0][0] > best[0]):
                best = (candidates[0][0], w, candidates[0][1], candidates[0][2])
        span, score = ("", 0, 0), 0.0
        if best is not None:
            _, w, s, e = best
            mapping = features.token_to_word[w]
            span = _answer_span(example, mapping[s], mapping[e])
            end_logits = outputs["end_logits"][w]
            if "start_candidates" in outputs:  # the joint head: the end row of this start
                starts = list(np.asarray(outputs["start_candidates"][w]))
                end_logits = end_logits[starts.index(s)]
            log_p = _log_softmax(outputs["start_logits"][w])[s] + _log_softmax(end_logits)[e]
            score = float(np.exp(log_p))
        if no_answer == "null_score":
            nulls = null_scores(outputs, by_example.get(index, []))
            best_answerable = (best[0] if best is not None else NO_SPAN) - min(nulls)
        details[example.qid] = {
            "span": span,
            "span_score": score,
            "answerable_logit": float(best_answerable) if version_2 else None,
            "no_answer": float(1.0 / (1.0 + np.exp(best_answerable))) if version_2 else 0.0,
        }
    return with_threshold(details, threshold)


def null_scores(outputs: dict, windows) -> list[float]:
    """The null score (start plus end logit at [CLS]) of each of `windows`: the no-answer
    score of BertForQuestionAnswering's head, which trains unanswerable windows on [CLS]."""
    return [float(outputs["start_logits"][w][0] + outputs["end_logits"][w][0]) for w in windows]


def with_threshold(details: dict, threshold: float) -> dict:
    """`details` with `answer`, `start`, `end` and `score` decided at `threshold`."""
    threshold = float(threshold)
    for value in details.values():
        logit = value["answerable_logit"]
        answered = value["span"][0] != "" and (logit is None or logit >= threshold)
        text, start, end = value["span"] if answered else ("", 0, 0)
        value.update(answer=text, start=start, end=end, score=value["span_score"] * answered)
    return details


def best_threshold(details: dict, references: dict) -> tuple[float, float]:
    """(answerable-logit threshold, F1 in percent at it) that maximises SQuAD 2.0 F1 over
    `references` (question id -> gold texts): the official script's best-threshold search,
    the threshold placed between two dev logits. Choose it on dev; apply it, unchanged, to
    test."""
    from electra_tf.metrics import squad_f1

    qids = [q for q in references if q in details]
    if not qids:
        return 0.0, 0.0
    empty = np.array([squad_f1("", references[q]) for q in qids])
    spans = np.array([squad_f1(details[q]["span"][0], references[q]) for q in qids])
    logits = np.array([details[q]["answerable_logit"] for q in qids], np.float64)
    order = np.argsort(-logits, kind="stable")
    gains = np.concatenate([[0.0], np.cumsum((spans - empty)[order])])
    cut = int(np.argmax(gains))  # answer the `cut` questions of highest logit
    # Halfway between the last answered logit and the first unanswered one (not on either:
    # the same question scored in another batch or in the SavedModel differs by ~1e-6).
    ends = np.concatenate([[logits.max() + 2.0], logits[order], [logits.min() - 2.0]])
    threshold = float((ends[cut] + ends[cut + 1]) / 2)
    return threshold, float(100.0 * (empty.sum() + gains[cut]) / len(qids))


def predict_answers(
    examples,
    features: SquadFeatures,
    outputs: dict,
    version_2: bool,
    n_best=20,
    max_answer_length=30,
    threshold: float = 0.0,
) -> dict:
    """Question id -> predicted text ("" for no answer) from the model's window outputs."""
    details = answer_details(
        examples, features, outputs, version_2, n_best, max_answer_length, threshold
    )
    return {qid: value["answer"] for qid, value in details.items()}
