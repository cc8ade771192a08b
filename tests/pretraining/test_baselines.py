"""The bigram-count detector: PMI and scores worked out by hand."""

import numpy as np
import pytest

from electra_tf.pretraining.baselines import BigramDetector


def test_pmi_and_scores_worked_out():
    # Counts of [0 1 2 1]: tokens 0:1 1:2 2:1 (N=4); pairs 01, 12, 21 once each, so every
    # token starts one pair. Add-one smoothing over V=3:
    #   pmi(0,1) = log((1+1)/(1+3)) - log((2+1)/(4+3)) = log(7/6)
    #   pmi(1,0) = log((0+1)/(1+3)) - log((1+1)/(4+3)) = log(7/8)
    detector = BigramDetector(vocabulary_size=3)
    detector.update(np.array([[0, 1, 2, 1]]), np.ones((1, 4)))
    np.testing.assert_allclose(detector.pmi([0, 1], [1, 0]), np.log([7 / 6, 7 / 8]))
    # [1 0 1]: the middle token has two neighbours, the ends one each.
    expected = -np.array([[np.log(7 / 8), np.log(7 / 8) + np.log(7 / 6), np.log(7 / 6)]])
    np.testing.assert_allclose(detector.scores(np.array([[1, 0, 1]]), np.ones((1, 3))), expected)


def test_padding_is_neither_counted_nor_scored():
    detector = BigramDetector(vocabulary_size=3)
    detector.update(np.array([[0, 1, 2, 1]]), np.array([[1, 1, 1, 0]]))
    # Tokens 0 1 2 once each (N=3); pairs 01 and 12; pmi(2,1) has no pair count:
    #   log((0+1)/(0+3)) - log((1+1)/(3+3)) = log(1)
    np.testing.assert_allclose(detector.pmi([2], [1]), [0.0], atol=1e-12)
    # pmi(0,1) = log((1+1)/(1+3)) - log((1+1)/(3+3)) = log(3/2)
    np.testing.assert_allclose(detector.pmi([0], [1]), [np.log(1.5)])
    scores = detector.scores(np.array([[0, 1, 0]]), np.array([[1, 1, 0]]))
    np.testing.assert_allclose(scores, [[-np.log(1.5), -np.log(1.5), 0.0]])


def test_counting_in_batches_equals_counting_at_once():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 7, size=(10, 9))
    mask = (rng.random((10, 9)) < 0.9).astype(int)
    whole, parts = BigramDetector(7), BigramDetector(7)
    whole.update(ids, mask)
    for start in range(0, 10, 3):
        parts.update(ids[start : start + 3], mask[start : start + 3])
        parts.scores(ids[:1], mask[:1])  # reading between updates must not lose counts
    np.testing.assert_allclose(parts.scores(ids, mask), whole.scores(ids, mask))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="vocabulary_size"):
        BigramDetector(0)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        BigramDetector(3).update(np.array([[0, 3]]), np.ones((1, 2)))
