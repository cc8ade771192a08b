"""The linear probe: features worked out from the encoder, the C search, the report."""

import keras
import numpy as np
import pytest
from helpers import FINETUNE_ENCODER, scratch_init, write_lines

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.finetuning.probe import (
    beats_random,
    encoder_features,
    fit_probe,
    probe_report,
    probe_table,
)
from electra_tf.finetuning.readers import read_glue_tsv
from electra_tf.finetuning.tasks import TASKS
from electra_tf.models.encoder import ElectraEncoder


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
