"""The metrics against answers worked out by hand."""

import numpy as np
import pytest

from electra_tf import metrics


def test_classification_metrics_by_hand():
    labels = [1, 1, 1, 0, 0, 0, 0, 1]
    predictions = [1, 1, 0, 0, 0, 1, 0, 1]
    # tp=3 fn=1 fp=1 tn=3
    assert metrics.accuracy(labels, predictions) == 6 / 8
    assert metrics.f1_binary(labels, predictions) == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
    assert metrics.matthews_corrcoef(labels, predictions) == pytest.approx((9 - 1) / 16)
    assert metrics.matthews_corrcoef([1, 1, 0], [1, 1, 1]) == 0.0  # undefined: 0
    assert metrics.f1_binary([0, 0], [0, 0]) == 0.0


def test_correlations_by_hand():
    x, y = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 9.0]
    # Pearson: centred x = (-1.5 -.5 .5 1.5), y = (-3 -1 0 4): sum xy = 4.5+.5+0+6 = 11,
    # sum x^2 = 5, sum y^2 = 26.
    assert metrics.pearson(x, y) == pytest.approx(11 / np.sqrt(5 * 26))
    assert metrics.spearman(x, y) == pytest.approx(1.0)
    # Ties share the average rank: y ranks (1, 2.5, 2.5, 4).
    assert metrics.spearman([1, 2, 3, 4], [0, 5, 5, 9]) == pytest.approx(
        metrics.pearson([1, 2, 3, 4], [1, 2.5, 2.5, 4])
    )
    assert metrics.spearman([3, 1, 2], [1, 3, 2]) == pytest.approx(-1.0)


def test_squad_metrics_with_normalization_and_no_answers():
    assert metrics.normalize_answer("The  Denver Broncos!") == "denver broncos"
    assert metrics.squad_exact_match("denver broncos", ["The Denver Broncos."]) == 1.0
    # F1: prediction "the broncos won" -> [broncos, won]; gold "Denver Broncos" -> [denver,
    # broncos]; one common token: P = 1/2, R = 1/2, F1 = 1/2.
    assert metrics.squad_f1("the broncos won", ["Denver Broncos"]) == pytest.approx(0.5)
    assert metrics.squad_f1("x", ["Denver Broncos", "x"]) == 1.0  # best gold answer
    assert metrics.squad_exact_match("", []) == 1.0 and metrics.squad_f1("", []) == 1.0
    assert metrics.squad_exact_match("something", []) == 0.0 and metrics.squad_f1("it", []) == 0.0
    scores = metrics.squad_scores(
        {"a": "Denver", "b": "", "c": "wrong"}, {"a": ["Denver"], "b": [], "c": ["right answer"]}
    )
    assert scores["exact"] == pytest.approx(200 / 3) and scores["HasAns_total"] == 2
    assert scores["NoAns_exact"] == 100.0 and scores["HasAns_f1"] == pytest.approx(50.0)


def _official_v2(dataset_answers: dict, predictions: dict) -> dict:
    """SQuAD 2.0's official evaluation (evaluate-v2.0.py) counting, written out independently:
    normalise (lower case, drop punctuation, articles, extra spaces); gold answers that
    normalise to nothing are dropped, an unanswerable question's gold is [""]; exact match
    and token F1 take the best gold answer; no-answer F1 is 1 only for an empty prediction."""
    import collections
    import re
    import string

    def normalise(text):
        text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
        text = re.sub(r"\b(a|an|the)\b", " ", text)
        return " ".join(text.split())

    def f1(gold, pred):
        g, p = normalise(gold).split(), normalise(pred).split()
        if not g or not p:
            return int(g == p)
        same = sum((collections.Counter(g) & collections.Counter(p)).values())
        if same == 0:
            return 0
        precision, recall = same / len(p), same / len(g)
        return 2 * precision * recall / (precision + recall)

    exact, f1s = {}, {}
    for qid, answers in dataset_answers.items():
        gold = [a for a in answers if normalise(a)] or [""]
        pred = predictions[qid]
        exact[qid] = max(int(normalise(a) == normalise(pred)) for a in gold)
        f1s[qid] = max(f1(a, pred) for a in gold)
    total = len(exact)
    return {"exact": 100.0 * sum(exact.values()) / total, "f1": 100.0 * sum(f1s.values()) / total}


def test_squad_scores_equal_the_official_v2_counting_on_random_answers():
    rng = np.random.default_rng(0)
    pool = ["The", "Denver", "Broncos", "a", "an", "won!", "1,000", "Super-Bowl", "(50)", "  "]

    def text():
        return " ".join(rng.choice(pool, size=int(rng.integers(0, 4))))

    references, predictions = {}, {}
    for i in range(500):
        references[str(i)] = [text() for _ in range(int(rng.integers(0, 4)))]
        predictions[str(i)] = text() if rng.random() < 0.8 else ""
    ours = metrics.squad_scores(predictions, references)
    official = _official_v2(references, predictions)
    assert ours["exact"] == pytest.approx(official["exact"])
    assert ours["f1"] == pytest.approx(official["f1"])
    assert 0 < ours["exact"] < ours["f1"] < 100


def test_roc_auc_by_hand_with_ties():
    roc_auc = metrics.roc_auc
    # Pairs (positive, negative): (0.5, 0.5) counts 1/2, the other three 1: 3.5 / 4.
    assert roc_auc([0, 1, 0, 1], [0.5, 0.5, 0.2, 0.9]) == 0.875
    assert roc_auc([1, 1, 0], [0.1, 0.2, 0.3]) == 0.0
    assert np.isnan(roc_auc([1, 1], [0.1, 0.2]))


def test_entity_scores_equal_seqeval_on_random_tag_sequences():
    import random

    from seqeval.metrics import f1_score, precision_score, recall_score

    from electra_tf.metrics import entity_scores

    rng = random.Random(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-PER", "S-LOC", "I-ORG"]
    for _ in range(500):
        gold = [[rng.choice(tags) for _ in range(rng.randint(1, 8))] for _ in range(3)]
        predicted = [[rng.choice(tags) for _ in sentence] for sentence in gold]
        ours = entity_scores(gold, predicted)
        if not (
            any(t != "O" for s in gold for t in s) and any(t != "O" for s in predicted for t in s)
        ):
            continue  # seqeval warns and returns 0 there; ours returns 0 too
        assert ours["f1"] == pytest.approx(f1_score(gold, predicted))
        assert ours["precision"] == pytest.approx(precision_score(gold, predicted))
        assert ours["recall"] == pytest.approx(recall_score(gold, predicted))


def test_equal_to_scikit_learn_and_scipy_except_where_documented():
    import scipy.stats
    import sklearn.metrics as sk

    rng = np.random.default_rng(0)
    for _ in range(20):
        y, p = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
        assert metrics.accuracy(y, p) == sk.accuracy_score(y, p)
        assert metrics.macro_f1(y, p) == pytest.approx(sk.f1_score(y, p, average="macro"))
        b, q = y == 1, p == 1
        assert metrics.f1_binary(b, q, True) == pytest.approx(sk.f1_score(b, q))
        assert metrics.matthews_corrcoef(b, q) == pytest.approx(sk.matthews_corrcoef(b, q))
        x, z = rng.normal(size=30), rng.integers(0, 5, 30)  # ties in z
        assert metrics.pearson(x, z) == pytest.approx(scipy.stats.pearsonr(x, z)[0])
        assert metrics.spearman(x, z) == pytest.approx(scipy.stats.spearmanr(x, z)[0])
        scores = np.resize(x, 40)
        assert metrics.roc_auc(b, scores) == pytest.approx(sk.roc_auc_score(b, scores))
        hot, pred = rng.integers(0, 2, (25, 4)), rng.integers(0, 2, (25, 4))
        assert metrics.micro_f1(hot, pred) == pytest.approx(sk.f1_score(hot, pred, average="micro"))
        assert metrics.exact_match(hot, pred) == sk.accuracy_score(hot, pred)
    # The documented differences: a constant side correlates 0 (SciPy: nan), and a label
    # never labelled nor predicted stays out of multi-hot macro F1 (scikit-learn: a 0).
    assert metrics.pearson([1, 1, 1], [1, 2, 3]) == 0.0
    assert metrics.spearman([1, 2, 3], [5, 5, 5]) == 0.0
    hot = np.array([[1, 0, 0], [0, 1, 0]])
    assert metrics.macro_f1(hot, hot) == 1.0
    assert sk.f1_score(hot, hot, average="macro", zero_division=0) == pytest.approx(2 / 3)
