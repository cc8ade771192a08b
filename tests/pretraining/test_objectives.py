"""The paper's baselines and ablations: labels, losses and FLOPs worked out by hand."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import structured_dataset, tiny_config

from electra_tf.config import ConfigError
from electra_tf.ops import losses
from electra_tf.ops.masking import MaskedBatch
from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives import OBJECTIVES, train_flops_per_step
from electra_tf.pretraining.objectives.adversarial import reinforce_losses
from electra_tf.pretraining.objectives.unigram import sample_unigram
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _counts_file(tmp_path, vocab=64):
    path = tmp_path / "unigram_counts.npy"
    np.save(path, np.arange(vocab, dtype=np.int64))
    return str(path)


EXTRA = {
    "two_stage": [
        "model.generator_size_fraction=1.0",
        "model.weight_tying=none",
        "objective.stage_one_steps=2",
    ],
    "bert_mlm": ["objective.mask_token_rate=0.8", "objective.random_token_rate=0.1"],
}


def _overrides(name, tmp_path, learning_rate):
    """`name`'s objective overrides, at `learning_rate`, for 40 steps."""
    overrides = [f"objective.name={name}", f"train.learning_rate={learning_rate}"]
    overrides += ["train.num_steps=40", *EXTRA.get(name, [])]
    if name == "unigram":
        overrides.append(f"objective.unigram_counts={_counts_file(tmp_path)}")
    return overrides


#: the loss each objective's training must lower (`loss` where not named).
LOSS_KEY = {"bert_mlm": "mlm_loss", "replace_mlm": "disc_mlm_loss"}
LOSS_KEY["all_tokens_mlm"] = "all_tokens_loss"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_every_objective_trains_and_lowers_its_loss(name, tmp_path):
    overrides = _overrides(name, tmp_path, "3e-3")
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(tiny_config(*overrides))
    model.compile()
    history = model.fit(structured_dataset(), steps_per_epoch=10, epochs=4, verbose=0).history
    assert all(math.isfinite(v) for v in history["loss"])
    key = LOSS_KEY.get(name, "loss")
    if name == "two_stage":  # stage 2 switches losses: compare within stage 2
        assert history["disc_loss"][-1] < history["disc_loss"][1]
    else:
        assert history[key][-1] < history[key][0]
    expected_flops = OBJECTIVES[name].train_flops(model.config)
    assert train_flops_per_step(model.config) == expected_flops > 0


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_every_objective_trains_and_lowers_its_loss_quick(name, tmp_path):
    """Default twin of `test_every_objective_trains_and_lowers_its_loss` (slow: 40 traced
    steps on a stream, the loss compared across epochs): three eager steps (for so few, cheaper
    than tracing the step) on one batch lower its loss, evaluated before and after (evaluation
    draws the same masks every time); two-stage's first three cross its switch, and three more
    lower the discriminator's loss."""
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(tiny_config(*_overrides(name, tmp_path, "1e-2")))
    model.compile(run_eagerly=True)
    batch = tf.data.Dataset.from_tensors(next(iter(structured_dataset(batch=8))))
    key = "disc_loss" if name == "two_stage" else LOSS_KEY.get(name, "loss")
    if name == "two_stage":  # stage 2 switches losses: compare within stage 2
        model.fit(batch.repeat(), steps_per_epoch=3, epochs=1, verbose=0)
        assert model.objective.stage == 2
    before = model.evaluate(batch, return_dict=True, verbose=0)[key]
    history = model.fit(batch.repeat(), steps_per_epoch=3, epochs=1, verbose=0).history
    assert all(math.isfinite(v) for v in history["loss"])
    assert model.evaluate(batch, return_dict=True, verbose=0)[key] < before - 0.05
    expected_flops = OBJECTIVES[name].train_flops(model.config)
    assert train_flops_per_step(model.config) == expected_flops > 0


def _masked(positions, weights, targets, masked_ids):
    return MaskedBatch(
        tf.constant(masked_ids, tf.int32),
        tf.constant(positions, tf.int32),
        tf.constant(targets, tf.int32),
        tf.constant(weights, tf.float32),
    )


def test_electra_15_weighs_only_the_masked_positions():
    objective = OBJECTIVES["electra_15"].__new__(OBJECTIVES["electra_15"])
    padding = tf.constant([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0]])
    masked = _masked(
        positions=[[2, 4, 0], [1, 0, 0]],
        weights=[[1, 1, 0], [1, 0, 0]],
        targets=[[7, 8, 0], [9, 0, 0]],
        masked_ids=np.zeros((2, 6)),
    )
    weights = objective.discriminator_weights(padding, masked).numpy()
    np.testing.assert_array_equal(weights, [[0, 0, 1, 0, 1, 0], [0, 1, 0, 0, 0, 0]])
    electra = OBJECTIVES["electra"].__new__(OBJECTIVES["electra"])
    np.testing.assert_array_equal(electra.discriminator_weights(padding, masked), padding)


def test_copy_mixture_loss_by_hand():
    # One sequence, 3 positions, vocabulary of 2. softmax([0, ln 3]) = [1/4, 3/4].
    vocab_logits = tf.constant([[[0.0, math.log(3.0)]] * 3])
    copy_logits = tf.constant([[0.0, math.log(3.0), 0.0]])  # D = 1/2, 3/4, 1/2
    inputs = tf.constant([[0, 0, 1]])
    targets = tf.constant([[0, 1, 1]])
    weights = tf.constant([[1.0, 1.0, 0.0]])
    loss, per_token, predictions = losses.copy_mixture_loss(
        vocab_logits, copy_logits, inputs, targets, weights
    )
    # t0: input == target: D + (1 - D) q(0) = 1/2 + 1/2 * 1/4 = 5/8.
    # t1: replaced: (1 - D) q(1) = 1/4 * 3/4 = 3/16.  t2: 1/2 + 1/2 * 3/4 = 7/8.
    expected = [-math.log(5 / 8), -math.log(3 / 16), -math.log(7 / 8)]
    np.testing.assert_allclose(per_token.numpy()[0], expected, rtol=1e-6)
    np.testing.assert_allclose(float(loss), (expected[0] + expected[1]) / (2 + 1e-6), rtol=1e-6)
    # t0: copy mass 5/8 > generate 1/2 * 3/4 = 3/8 -> 0; t1: 3/4 + 1/4 * 1/4 > 1/4 * 3/4 -> 0.
    np.testing.assert_array_equal(predictions.numpy(), [[0, 0, 1]])


def test_replace_mlm_reads_samples_and_predicts_originals():
    config = tiny_config("objective.name=replace_mlm")
    model = ElectraPretrainer(config)
    objective = model.objective
    seen = {}
    original_pass = objective.model_pass

    def spy(inputs, targets, weights, *rest):
        seen.update(inputs=inputs, targets=targets, weights=weights)
        return original_pass(inputs, targets, weights, *rest)

    objective.model_pass = spy
    batch = next(iter(structured_dataset()))
    from electra_tf.pretraining.objectives.base import StepContext

    context = StepContext(
        seed=3, step=tf.constant(0, tf.int64), example_index=tf.range(4), num_replicas=1
    )
    output = objective(batch, context, training=False, with_gradients=False)
    samples = output.mlm["samples"].numpy()
    positions = seen["inputs"]["mask_positions"].numpy()
    weights = seen["weights"].numpy()
    shown = np.take_along_axis(seen["inputs"]["token_ids"].numpy(), positions, axis=1)
    original = np.take_along_axis(batch["token_ids"].numpy(), positions, axis=1)
    used = weights > 0
    assert used.sum() > 0
    np.testing.assert_array_equal(shown[used], samples[used])  # the samples are read there
    np.testing.assert_array_equal(seen["targets"].numpy()[used], original[used])  # originals out
    # Outside the masked positions the sequence is untouched.
    untouched = np.ones_like(batch["token_ids"].numpy(), bool)
    for row in range(4):
        untouched[row, positions[row][used[row]]] = False
    np.testing.assert_array_equal(
        seen["inputs"]["token_ids"].numpy()[untouched], batch["token_ids"].numpy()[untouched]
    )


def test_reinforce_reward_baseline_and_gradient_by_hand():
    log_probs = tf.Variable([[-1.0, -2.0, -3.0]])
    rewards = tf.constant([[1.0, 0.5, 9.0]])
    baseline_logits = tf.constant([[0.0, 0.0, 0.0]])  # b = -log(1/2) = ln 2
    weights = tf.constant([[1.0, 1.0, 0.0]])
    with tf.GradientTape() as tape:
        policy, baseline_loss, baseline = reinforce_losses(
            log_probs, rewards, baseline_logits, weights, 2.0
        )
    ln2 = math.log(2.0)
    np.testing.assert_allclose(baseline.numpy(), [[ln2] * 3], rtol=1e-6)
    advantage = np.array([1.0 - ln2, 0.5 - ln2])
    np.testing.assert_allclose(float(policy), -(advantage[0] * -1 + advantage[1] * -2) / 2, 1e-6)
    # d policy / d log p = -advantage / normalizer; the unused slot gets nothing.
    np.testing.assert_allclose(
        tape.gradient(policy, log_probs).numpy(), [[-advantage[0] / 2, -advantage[1] / 2, 0]], 1e-6
    )
    # Baseline: sigmoid cross-entropy of p = 1/2 against target exp(-R) = ln 2 for any target.
    np.testing.assert_allclose(float(baseline_loss), ln2, rtol=1e-6)


def test_unigram_sampling_follows_the_cumulative_counts(tmp_path):
    cdf = tf.constant([0.0, 0.5, 0.5, 1.0])  # ids 1 and 3 have probability 1/2 each
    draws = tf.constant([[0.1, 0.6], [0.5, 0.999]])
    np.testing.assert_array_equal(sample_unigram(cdf, draws).numpy(), [[1, 3], [3, 3]])
    # Frequencies: special ids never sampled, others by count.
    path = _counts_file(tmp_path)
    model = ElectraPretrainer(
        tiny_config("objective.name=unigram", f"objective.unigram_counts={path}")
    )
    draws = tf.random.stateless_uniform([20000], seed=[1, 2])
    ids = sample_unigram(model.objective.cdf, draws).numpy()
    assert not np.isin(ids, [0, 2, 3, 4]).any()  # [PAD] [CLS] [SEP] [MASK] never; [UNK] may be
    counts = np.arange(64.0)
    counts[[0, 2, 3, 4]] = 0
    np.testing.assert_allclose(
        np.bincount(ids, minlength=64) / len(ids), counts / counts.sum(), atol=0.01
    )


def test_unigram_without_counts_names_the_file(tmp_path):
    missing = tmp_path / "nope.npy"
    with pytest.raises(ConfigError, match="nope.npy"):
        ElectraPretrainer(
            tiny_config("objective.name=unigram", f"objective.unigram_counts={missing}")
        )


def test_two_stage_needs_equal_untied_models():
    with pytest.raises(ConfigError, match="generator_size_fraction=1.0"):
        ElectraPretrainer(tiny_config("objective.name=two_stage"))


@pytest.mark.slow
def test_two_stage_copies_then_freezes_the_generator():
    _check_two_stage_copies_then_freezes_the_generator(run_eagerly=False)


def test_two_stage_copies_then_freezes_the_generator_quick():
    """Default twin of `test_two_stage_copies_then_freezes_the_generator` (slow: the step
    traced, once per `fit`): the same seven steps and checks, run eagerly (for so few steps,
    cheaper than three traces)."""
    _check_two_stage_copies_then_freezes_the_generator(run_eagerly=True)


def _check_two_stage_copies_then_freezes_the_generator(run_eagerly):
    """Two stage-1 steps leave the discriminator alone; the switch copies the generator's
    encoder into it, and stage 2 leaves the generator alone."""
    config = tiny_config(
        *EXTRA["two_stage"],
        "objective.name=two_stage",
        "train.num_steps=20",
        "train.learning_rate=1e-2",
    )
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(config)
    model.compile(run_eagerly=run_eagerly)
    disc_before = [w.numpy() for w in model.discriminator.weights]
    model.fit(
        structured_dataset(), steps_per_epoch=2, epochs=1, verbose=0
    )  # stage 1: generator only
    assert model.objective.stage == 1
    for before, after in zip(disc_before, model.discriminator.weights, strict=True):
        np.testing.assert_array_equal(before, after.numpy())  # the discriminator is untouched
    generator = [w.numpy() for w in model.generator.weights]
    encoder = [w.numpy() for w in model.generator.encoder.weights]
    # Stage 2: the switch copies the generator's encoder, then only the discriminator trains.
    copies = []

    class Spy(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            copies.append([w.numpy() for w in model.discriminator.encoder.weights])

    switch_and_spy = [*model.objective.callbacks(), Spy()]
    keras.Model.fit(
        model,
        structured_dataset(),
        steps_per_epoch=3,
        epochs=1,
        shuffle=False,
        verbose=0,
        callbacks=switch_and_spy,
    )
    assert model.objective.stage == 2
    for before, after in zip(generator, model.generator.weights, strict=True):
        np.testing.assert_array_equal(before, after.numpy())  # frozen: not even weight decay
    # After one stage-2 step the discriminator's encoder is the generator's plus one update.
    first = copies[0]
    step_change = max(np.abs(a - b).max() for a, b in zip(first, encoder, strict=True))
    assert step_change < 2e-2  # one Adam step of lr <= 1e-2 moves a weight by about lr
    assert any(np.abs(a - b).max() > 0 for a, b in zip(copies[-1], encoder, strict=True))
    history = model.fit(structured_dataset(), steps_per_epoch=2, epochs=1, verbose=0).history
    assert "disc_auc" in history


def test_objective_flops_relations_and_a_block_by_hand():
    # One block, h=2, s=2, i=4, one head, per the Appendix-E constants:
    # qkv 3*(2hh + h) = 30; scores 2hs = 8; softmax/dropout/scale 10*s*n = 20; values 2hs = 8;
    # output 2hh + h = 10; its dropout/residual/LayerNorm 10h = 20; intermediate
    # 2hi + i = 20, GELU 8i = 32; output 2hi + h = 18, then 10h = 20. Sum 186 per token.
    block = flops.TransformerFlops(hidden=2, layers=1, seq_len=2, vocab=3, intermediate=4, heads=1)
    assert block.block() == 186 * 2
    config = tiny_config()
    disc, gen = flops.model_shapes(config)
    batch = config.train.batch_size
    electra = OBJECTIVES["electra"].train_flops(config)
    assert electra == disc.train(batch, 1, "rtd") + gen.train(batch, 1, "mlm")
    assert OBJECTIVES["electra_15"].train_flops(config) == electra
    assert OBJECTIVES["adversarial"].train_flops(config) == electra
    assert OBJECTIVES["bert_mlm"].train_flops(config) == disc.train(batch, 1, "mlm")
    assert OBJECTIVES["unigram"].train_flops(config) == disc.train(batch, 1, "rtd")
    replace = OBJECTIVES["replace_mlm"].train_flops(config)
    assert replace == disc.train(batch, 1, "mlm") + gen.train(batch, 1, "mlm")
    all_tokens = OBJECTIVES["all_tokens_mlm"].train_flops(config)
    # Vocabulary softmax at all 16 positions instead of the N masked ones costs more.
    assert all_tokens > replace + disc.train(batch, 1, "rtd") - disc.train(batch, 1, "none")
    two = tiny_config(
        *EXTRA["two_stage"],
        "objective.name=two_stage",
        "train.num_steps=10",
        "objective.stage_one_steps=4",
    )
    d2, g2 = flops.model_shapes(two)
    stage1 = g2.train(batch, 1, "mlm")
    stage2 = d2.train(batch, 1, "rtd") + g2.train(batch, 1, "mlm") / 2
    assert OBJECTIVES["two_stage"].train_flops(two) == pytest.approx((4 * stage1 + 6 * stage2) / 10)
