"""The metrics of pre-training evaluation and fine-tuning, in plain NumPy.

Accuracy, binary F1, Matthews correlation (CoLA), Pearson and Spearman
correlation (STS-B), the exact (rank-based) ROC AUC that pre-training
evaluation reports for replaced-token detection, and SQuAD's exact match and
F1 with the official answer normalization (lower-case, strip punctuation,
articles and extra whitespace), the maximum over the gold answers, and SQuAD
2.0's no-answer handling (an unanswerable question scores 1 only for an empty
prediction).
"""

from __future__ import annotations

import collections
import re
import string

import numpy as np

__all__ = [
    "accuracy",
    "f1_binary",
    "matthews_corrcoef",
    "pearson",
    "spearman",
    "roc_auc",
    "macro_f1",
    "micro_f1",
    "exact_match",
    "entities",
    "entity_scores",
    "normalize_answer",
    "squad_exact_match",
    "squad_f1",
    "squad_scores",
]


def accuracy(labels, predictions) -> float:
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return float(np.mean(labels == predictions)) if labels.size else 0.0


def f1_binary(labels, predictions, positive: int = 1) -> float:
    """F1 of the positive class (GLUE's MRPC and QQP)."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    tp = np.sum((predictions == positive) & (labels == positive))
    fp = np.sum((predictions == positive) & (labels != positive))
    fn = np.sum((predictions != positive) & (labels == positive))
    return float(2 * tp / (2 * tp + fp + fn)) if tp else 0.0


def macro_f1(labels, predictions) -> float:
    """Unweighted mean over classes of each class's F1 (class ids, or multi-hot rows).

    A class that is neither in the labels nor predicted is left out of the mean.
    """
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.ndim == 2:  # multi-hot: one binary F1 per column
        columns = [
            (labels[:, j], predictions[:, j])
            for j in range(labels.shape[1])
            if labels[:, j].any() or predictions[:, j].any()
        ]
        scores = [f1_binary(y.astype(int), p.astype(int)) for y, p in columns]
    else:
        classes = np.union1d(labels, predictions)
        scores = [f1_binary(labels == c, predictions == c, positive=True) for c in classes]
    return float(np.mean(scores)) if scores else 0.0


def micro_f1(labels, predictions) -> float:
    """F1 over every (row, label) decision of multi-hot rows (micro-averaged)."""
    labels = np.asarray(labels).astype(bool)
    predictions = np.asarray(predictions).astype(bool)
    tp = np.sum(labels & predictions)
    denominator = 2 * tp + np.sum(predictions & ~labels) + np.sum(labels & ~predictions)
    return float(2 * tp / denominator) if tp else 0.0


def exact_match(labels, predictions) -> float:
    """The share of rows whose whole label set is predicted exactly (subset accuracy)."""
    labels, predictions = np.asarray(labels).astype(bool), np.asarray(predictions).astype(bool)
    return float(np.mean(np.all(labels == predictions, axis=-1))) if len(labels) else 0.0


def matthews_corrcoef(labels, predictions) -> float:
    """Matthews correlation of binary labels; 0 when undefined (a constant row or column)."""
    labels, predictions = np.asarray(labels).astype(int), np.asarray(predictions).astype(int)
    tp = float(np.sum((predictions == 1) & (labels == 1)))
    tn = float(np.sum((predictions == 0) & (labels == 0)))
    fp = float(np.sum((predictions == 1) & (labels == 0)))
    fn = float(np.sum((predictions == 0) & (labels == 1)))
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0


def pearson(x, y) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / denominator) if denominator else 0.0


def _ranks(values) -> np.ndarray:
    """Ranks starting at 1, ties sharing their average rank."""
    values = np.asarray(values, np.float64)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def spearman(x, y) -> float:
    """Spearman's rank correlation (Pearson of average ranks)."""
    return pearson(_ranks(x), _ranks(y))


def roc_auc(labels, scores) -> float:
    """Exact area under the ROC curve (Mann-Whitney U over average ranks; ties count half).

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    labels = np.asarray(labels).astype(bool).ravel()
    positives, negatives = int(labels.sum()), int((~labels).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = _ranks(np.asarray(scores, np.float64).ravel())
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def normalize_answer(text: str) -> str:
    """SQuAD's normalization: lower-case, drop punctuation and a/an/the, squeeze spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_exact_match(prediction: str, answers) -> float:
    """1.0 if the normalized prediction equals a normalized gold answer (no answers: empty)."""
    answers = [a for a in answers if normalize_answer(a)] or [""]
    return float(max(normalize_answer(prediction) == normalize_answer(a) for a in answers))


def _f1(prediction: str, answer: str) -> float:
    predicted, gold = normalize_answer(prediction).split(), normalize_answer(answer).split()
    if not predicted or not gold:
        return float(predicted == gold)  # SQuAD 2.0: both empty scores 1
    common = collections.Counter(predicted) & collections.Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def squad_f1(prediction: str, answers) -> float:
    """Token F1 against the best gold answer (no answers: 1.0 only for an empty prediction)."""
    answers = [a for a in answers if normalize_answer(a)] or [""]
    return max(_f1(prediction, a) for a in answers)


def squad_scores(predictions: dict, references: dict) -> dict:
    """Exact match and F1 in percent over questions, with the has/no-answer breakdown.

    Args:
        predictions: question id -> predicted text ("" for no answer).
        references: question id -> list of gold answer texts (empty list: unanswerable).

    Returns:
        dict with `exact`, `f1`, `total`, and `HasAns_*` / `NoAns_*` where present.
    """
    exact, f1, has_answer = [], [], []
    for qid, answers in references.items():
        prediction = predictions.get(qid, "")
        exact.append(squad_exact_match(prediction, answers))
        f1.append(squad_f1(prediction, answers))
        has_answer.append(any(normalize_answer(a) for a in answers))
    exact, f1, has_answer = np.asarray(exact), np.asarray(f1), np.asarray(has_answer)
    scores = {"exact": 100.0 * exact.mean(), "f1": 100.0 * f1.mean(), "total": int(exact.size)}
    for name, subset in (("HasAns", has_answer), ("NoAns", ~has_answer)):
        if subset.any():
            scores[f"{name}_exact"] = 100.0 * exact[subset].mean()
            scores[f"{name}_f1"] = 100.0 * f1[subset].mean()
            scores[f"{name}_total"] = int(subset.sum())
    return scores


def _prefix_and_type(tag: str) -> tuple[str, str]:
    return tag[:1], tag[1:].split("-", 1)[-1] or "_"


def _chunk_ends(previous: str, current: str, previous_type: str, current_type: str) -> bool:
    if previous in ("E", "S"):
        return True
    if previous in ("B", "I") and current in ("B", "S", "O"):
        return True
    return previous not in ("O", ".") and previous_type != current_type


def _chunk_starts(previous: str, current: str, previous_type: str, current_type: str) -> bool:
    if current in ("B", "S"):
        return True
    if previous in ("E", "S", "O") and current in ("E", "I"):
        return True
    return current not in ("O", ".") and previous_type != current_type


def entities(sequences) -> set:
    """The (type, first, last) entities of tag sequences (BIO, IOB1, IOBES), as conlleval and
    seqeval's default mode read them; positions count over the sequences joined with an "O"
    between them."""
    tags = [tag for sequence in sequences for tag in (*sequence, "O")]
    found, begin = set(), 0
    previous, previous_type = "O", ""
    for i, tag in enumerate([*tags, "O"]):
        prefix, kind = _prefix_and_type(tag)
        if _chunk_ends(previous, prefix, previous_type, kind):
            found.add((previous_type, begin, i - 1))
        if _chunk_starts(previous, prefix, previous_type, kind):
            begin = i
        previous, previous_type = prefix, kind
    return found


def entity_scores(gold, predicted) -> dict:
    """Entity-level precision, recall and F1 (an entity counts when its type and both ends
    match) and word accuracy, over lists of tag sequences.

    Example:

    >>> gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    >>> predicted = [["B-PER", "I-PER", "O", "B-ORG"]]
    >>> {k: round(v, 3) for k, v in entity_scores(gold, predicted).items()}
    {'f1': 0.5, 'precision': 0.5, 'recall': 0.5, 'accuracy': 0.75}
    """
    truth, guess = entities(gold), entities(predicted)
    correct = len(truth & guess)
    precision = correct / len(guess) if guess else 0.0
    recall = correct / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    pairs = [
        (g, p) for gs, ps in zip(gold, predicted, strict=True) for g, p in zip(gs, ps, strict=True)
    ]
    accuracy = float(np.mean([g == p for g, p in pairs])) if pairs else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "accuracy": accuracy}
