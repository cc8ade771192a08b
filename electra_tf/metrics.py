"""The metrics of pre-training evaluation and fine-tuning.

Accuracy, F1 (binary, macro, micro), subset accuracy and Matthews correlation
(CoLA) are scikit-learn's; Pearson and Spearman correlation (STS-B) SciPy's.
Where they differ, it is said and tested: a correlation of a constant side is
0 (SciPy: nan), and macro F1 of multi-hot rows leaves out labels never labelled
nor predicted (scikit-learn: counted as 0). The exact (rank-based) ROC AUC that pre-training
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
    """The share of predictions equal to the labels (scikit-learn's `accuracy_score`)."""
    from sklearn.metrics import accuracy_score

    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return float(accuracy_score(labels, predictions)) if labels.size else 0.0


def f1_binary(labels, predictions, positive: int = 1) -> float:
    """F1 of the positive class (GLUE's MRPC and QQP), 0 when it is never labelled or
    predicted (scikit-learn's `f1_score`, `zero_division=0`)."""
    from sklearn.metrics import f1_score

    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return float(f1_score(labels == positive, predictions == positive, zero_division=0))


def macro_f1(labels, predictions) -> float:
    """Unweighted mean over classes of each class's F1 (class ids, or multi-hot rows).

    scikit-learn's `f1_score(average="macro")`, over the classes that occur among the labels
    or the predictions: a label column of multi-hot rows that is never labelled nor
    predicted is left out of the mean (scikit-learn alone would count it as 0, which makes
    the score depend on how many unused labels a task declares).
    """
    from sklearn.metrics import f1_score

    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.ndim == 2:
        used = np.flatnonzero(labels.astype(bool).any(0) | predictions.astype(bool).any(0))
        if not len(used):
            return 0.0
        return float(
            f1_score(
                labels.astype(int), predictions.astype(int), labels=used, average="macro",
                zero_division=0,
            )
        )  # fmt: skip
    if not labels.size:
        return 0.0
    return float(f1_score(labels, predictions, average="macro", zero_division=0))


def micro_f1(labels, predictions) -> float:
    """F1 over every (row, label) decision of multi-hot rows (scikit-learn's micro F1)."""
    from sklearn.metrics import f1_score

    labels = np.asarray(labels).astype(int)
    predictions = np.asarray(predictions).astype(int)
    if not labels.size:
        return 0.0
    return float(f1_score(labels, predictions, average="micro", zero_division=0))


def exact_match(labels, predictions) -> float:
    """The share of rows whose whole label set is predicted exactly (subset accuracy:
    scikit-learn's `accuracy_score` on multi-hot rows)."""
    from sklearn.metrics import accuracy_score

    labels, predictions = np.asarray(labels).astype(int), np.asarray(predictions).astype(int)
    return float(accuracy_score(labels, predictions)) if len(labels) else 0.0


def matthews_corrcoef(labels, predictions) -> float:
    """Matthews correlation (CoLA); 0 when undefined (scikit-learn's `matthews_corrcoef`)."""
    from sklearn.metrics import matthews_corrcoef as mcc

    return float(mcc(np.asarray(labels).astype(int), np.asarray(predictions).astype(int)))


def pearson(x, y) -> float:
    """Pearson's correlation (SciPy's `pearsonr`); 0 where SciPy's is undefined (nan: a
    constant side), so a dev score that chooses epochs is always a number."""
    return _correlation("pearsonr", x, y)


def spearman(x, y) -> float:
    """Spearman's rank correlation, ties at their average rank (SciPy's `spearmanr`); 0
    where SciPy's is undefined (a constant side)."""
    return _correlation("spearmanr", x, y)


def _correlation(name: str, x, y) -> float:
    import scipy.stats

    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return 0.0
    return float(getattr(scipy.stats, name)(x, y)[0])


def _ranks(values) -> np.ndarray:
    """Ranks starting at 1, ties sharing their average rank (SciPy's `rankdata`)."""
    import scipy.stats

    return scipy.stats.rankdata(np.asarray(values, np.float64))


def roc_auc(labels, scores) -> float:
    """Exact area under the ROC curve (Mann-Whitney U over average ranks; ties count half),
    as scikit-learn's `roc_auc_score`; nan when one class is absent (scikit-learn raises).

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
