"""Appendix G: ELECTRA as a masked language model."""

import keras
import numpy as np
import tensorflow as tf
from helpers import structured_dataset, tiny_config

from electra_tf.experiments.electra_mlm import electra_as_mlm, optimal_discriminator_scores
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def test_optimal_discriminator_score_by_hand():
    # mask rate 0.15 -> a = 0.85 / 0.15 = 17/3. D = 0.5, p = 0.2: 0.1 / (17/6 + 0.2).
    score = optimal_discriminator_scores(tf.constant(0.5), tf.constant(0.2), 0.15)
    np.testing.assert_allclose(float(score), 0.1 / (17 / 6 + 0.2), rtol=1e-6)
    # A confident discriminator overturns the generator's ranking.
    scores = optimal_discriminator_scores(tf.constant([0.99, 0.01]), tf.constant([0.3, 0.6]), 0.15)
    assert scores.numpy()[0] > scores.numpy()[1]


def test_electra_as_mlm_runs_and_reports_both_accuracies():
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(tiny_config("train.learning_rate=3e-3"))
    model.compile()
    model.fit(structured_dataset(), steps_per_epoch=30, epochs=1, verbose=0)
    result = electra_as_mlm(model, structured_dataset(seed=5), steps=2, top_k=8)
    assert result["positions"] > 0 and result["top_k"] == 8
    assert 0.0 <= result["generator_accuracy"] <= 1.0
    assert 0.0 <= result["electra_accuracy"] <= 1.0
