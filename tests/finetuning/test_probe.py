"""The linear probe: features worked out from the encoder, the C search, the report."""

import keras
import numpy as np
import pytest
from helpers import FINETUNE_ENCODER, scratch_init, write_lines

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets.readers import read_glue_tsv
from electra_tf.datasets.tasks import TASKS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.probe import (
    beats_random,
    encoder_features,
    fit_probe,
    probe_report,
    probe_table,
)


def test_features_are_cls_and_the_mean_over_real_tokens_at_any_batch_length():
    keras.utils.set_random_seed(0)
    encoder = ElectraEncoder(**{**FINETUNE_ENCODER, "dropout": 0.0})
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 40, size=(5, 10)).astype("int32")
    mask = np.zeros_like(ids)
    for row, length in enumerate([10, 3, 7, 1, 5]):
        mask[row, :length] = 1
    ids[:, 0] = 2
    inputs = {"token_ids": ids * mask, "padding_mask": mask, "segment_ids": np.zeros_like(ids)}
    sequence = np.asarray(encoder(inputs, training=False))  # the full padded length
    cls = sequence[:, 0]
    mean = (sequence * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    features = encoder_features(encoder, inputs, batch_size=2)  # batches cut to their longest
    np.testing.assert_allclose(features, np.concatenate([cls, mean], 1), atol=1e-5)


def test_fit_probe_chooses_c_on_dev_and_scores_test():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (x[:, 0] + 0.1 * rng.normal(size=200) > 0).astype(int)
    result = fit_probe((x[:120], y[:120]), (x[120:160], y[120:160]), (x[160:], y[160:]))
    assert result["dev_accuracy"] >= 0.95 and result["test_accuracy"] >= 0.9
    # Labels independent of the features: no C does better than chance by much.
    noise = rng.integers(0, 2, size=200)
    assert fit_probe((x[:120], noise[:120]), (x[120:], noise[120:]))["dev_accuracy"] < 0.7


def test_beats_random_needs_more_than_twice_the_seed_spread():
    random = {"mean": 0.60, "std": 0.02}
    assert beats_random(0.641, random) and not beats_random(0.639, random)


def test_report_beside_bag_of_words_and_random_seeds(tmp_path):
    positive, negative = ["good", "great", "fine"], ["bad", "awful", "poor"]
    neutral = ["the", "movie", "was", "plot", "actors", "very", "and"]
    rng = np.random.default_rng(1)
    rows = ["sentence\tlabel"]
    for _ in range(240):
        label = int(rng.random() < 0.5)
        words = list(rng.choice(neutral, size=4)) + [rng.choice(positive if label else negative)]
        rows.append(f"{' '.join(words)}\t{label}")
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + positive + negative + neutral, tmp_path / "v")
    task = TASKS["sst2"]
    splits = {
        name: read_glue_tsv(task, write_lines(tmp_path / f"{name}.tsv", [rows[0], *part]))
        for name, part in (("train", rows[1:161]), ("dev", rows[161:201]), ("test", rows[201:]))
    }
    init = scratch_init(18, vocab)
    report = probe_report(init, task, splits, random_seeds=2, max_seq_length=16)
    labels = [row["encoder"] for row in report["rows"]]
    assert labels == ["bag of words", "random init (seed 0)", "random init (seed 1)", "scratch"]
    assert report["rows"][0]["test_accuracy"] == 1.0  # one sentiment word decides the label
    seeds = [row["test_accuracy"] for row in report["rows"][1:3]]
    assert report["random"]["mean"] == pytest.approx(np.mean(seeds))
    assert report["random"]["std"] == pytest.approx(np.std(seeds, ddof=1))
    assert "| bag of words | 1.0000 | 1.0000 |" in probe_table(report)
    with pytest.raises(ConfigError, match="scores classification tasks; stsb is a regression"):
        probe_report(init, TASKS["stsb"], splits)


def test_without_a_test_split_dev_is_scored_once_and_c_comes_from_train():
    # Dev is the reported figure here, so it must not choose C: two different dev sets
    # give the same C, and the same dev accuracy as fitting that C on train directly.
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 6))
    y = (x[:, 0] + 0.8 * rng.normal(size=300) > 0).astype(int)
    train, dev_a, dev_b = (x[:150], y[:150]), (x[150:225], y[150:225]), (x[225:], y[225:])
    a, b = fit_probe(train, dev_a), fit_probe(train, dev_b)
    assert a["C"] == b["C"] and a["C_chosen_on"] == "3-fold cross-validation on train"
    scaler = StandardScaler().fit(train[0])
    direct = LogisticRegression(C=a["C"], max_iter=3000).fit(scaler.transform(train[0]), train[1])
    assert a["dev_accuracy"] == pytest.approx(direct.score(scaler.transform(dev_a[0]), dev_a[1]))
    with_test = fit_probe(train, dev_a, dev_b)
    assert with_test["C_chosen_on"] == "dev" and "test_accuracy" in with_test


def test_a_task_with_named_dev_splits_is_probed_on_the_first_and_scores_the_others(tmp_path):
    # MNLI's dev splits are dev_matched and dev_mismatched; the probe used to fail for want
    # of a "dev" split.
    words = {0: "yes", 1: "no", 2: "maybe"}
    rng = np.random.default_rng(2)
    rows = ["sentence1\tsentence2\tgold_label"]
    names = TASKS["mnli"].labels
    for _ in range(150):
        label = int(rng.integers(0, 3))
        rows.append(f"the premise\tthe {words[label]} answer\t{names[label]}")
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + ["the", "premise", "answer", *words.values()], tmp_path / "v"
    )
    task = TASKS["mnli"]
    splits = {
        name: read_glue_tsv(task, write_lines(tmp_path / f"{name}.tsv", [rows[0], *part]))
        for name, part in (
            ("train", rows[1:91]), ("dev_matched", rows[91:121]), ("dev_mismatched", rows[121:])
        )
    }  # fmt: skip
    report = probe_report(scratch_init(12, vocab), task, splits, random_seeds=0)
    bag = report["rows"][0]
    assert bag["dev_accuracy"] == 1.0 and bag["dev_mismatched_accuracy"] == 1.0
    assert bag["C_chosen_on"].endswith("cross-validation on train")
    assert "dev_mismatched_accuracy" in report["rows"][-1]
