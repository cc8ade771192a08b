import numpy as np
import pytest
from helpers import SPECIAL, tiny_config, write_packed

from electra_tf.demo import held_out_report
from electra_tf.pretraining.baselines import BigramDetector
from electra_tf.pretraining.pretrainer import ElectraPretrainer


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


def _report(tmp_path, *overrides):
    data = write_packed(tmp_path / "data", n=480, seq=16, shards=2)
    files = [f"{data}/shard-000.tfrecord", f"{data}/shard-001.tfrecord"]
    model = ElectraPretrainer(tiny_config(*overrides))
    model.compile()
    special = set(SPECIAL.values())
    return held_out_report(model, files[1:], [240], special, 16, baseline_files=files[:1])


def test_report_of_a_discriminator_without_generator(tmp_path):
    counts = tmp_path / "counts.npy"
    np.save(counts, np.arange(64, dtype=np.int64))
    report = _report(tmp_path, "objective.name=unigram", f"objective.unigram_counts={counts}")
    assert "mlm_accuracy" not in report and "unigram_baseline_mlm_accuracy" not in report
    assert 0.0 <= report["disc_auc"] <= 1.0
    # The examples are runs of one word ([CLS] a a a [SEP] b b b [SEP]); a replaced token
    # breaks its run, which counted pairs expose (words unseen in the counted shard do not).
    assert report["bigram_baseline_disc_auc"] > 0.8  # 0.906 here


def test_report_of_a_generator_without_discriminator(tmp_path):
    report = _report(tmp_path, "objective.name=bert_mlm")
    assert "disc_auc" not in report and "bigram_baseline_disc_auc" not in report
    assert 0.0 <= report["mlm_accuracy"] <= 1.0
    assert 0.0 < report["unigram_baseline_mlm_accuracy"] <= 1.0


def test_bigram_baseline_reads_every_real_neighbour_when_only_masked_tokens_count(tmp_path):
    # electra_15 weighs the masked positions only; their neighbours are still real tokens.
    # Reading the loss weights as the padding mask would leave no neighbours, every score 0
    # and the AUC at exactly 0.5.
    report = _report(tmp_path, "objective.name=electra_15")
    assert report["replaced_fraction"] > 0.9  # only masked positions count
    assert report["bigram_baseline_disc_auc"] > 0.8  # 0.992 here


def test_report_counts_whole_batches_and_keras_does_not_warn(tmp_path, recwarn):
    # 240 examples in batches of 64: three whole batches. With the length unknown, Keras
    # ends the pass by warning that the input "ran out of data" (a finite evaluation
    # set is expected to end).
    data = write_packed(tmp_path / "data", n=480, seq=16, shards=2)
    model = ElectraPretrainer(tiny_config())
    model.compile()
    special = set(SPECIAL.values())
    files = [f"{data}/shard-001.tfrecord"]
    report = held_out_report(model, files, [240], special, 64)
    assert report["evaluated_examples"] == 192
    messages = [str(w.message) for w in recwarn]
    assert not any("ran out of data" in m for m in messages), messages
