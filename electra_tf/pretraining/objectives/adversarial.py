"""Adversarial ELECTRA (paper, Appendix F): the generator trained to fool the discriminator.

Sampling is not differentiable, so the generator learns by REINFORCE: at
each masked position the reward of its sample `x_t` is the discriminator's
loss there, `R = -log D` if the sample equals the original and
`R = -log(1 - D)` if it replaced it (`D` = the discriminator's probability
that the token is original). The generator's loss is
`-(R - b) * log p_G(x_t)` averaged over the masked positions, with a learned
baseline `b = -log sigmoid(w . h_G(t))` on the generator's hidden state,
trained by cross-entropy against the reward (target `exp(-R)`), weighted by
`objective.baseline_weight`. The discriminator trains as in ELECTRA. The
generator receives no MLM loss.

The step runs eagerly-traced, not XLA-compiled (`jit_compile` is ignored).
"""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.ops import backend, portable, sampling
from electra_tf.pretraining.objectives.base import StepContext
from electra_tf.pretraining.objectives.electra import ElectraObjective

__all__ = ["AdversarialObjective", "reinforce_losses"]


def _pick(log_probs, ids):
    """`log_probs[b, n, ids[b, n]]`: `[B, N]` from `[B, N, V]` and int `[B, N]`."""
    if backend.tensorflow_fast_paths():
        return backend.tensorflow().gather(log_probs, ids, batch_dims=2)
    ids = ops.expand_dims(ops.cast(ids, "int32"), -1)
    return ops.squeeze(ops.take_along_axis(log_probs, ids, axis=-1), -1)


def _portable_reinforce_losses(log_prob_samples, rewards, baseline_logits, weights, normalizer):
    """`reinforce_losses` in `keras.ops` (JAX, PyTorch, and TensorFlow in `portable()`)."""
    rewards = ops.stop_gradient(ops.cast(rewards, "float32"))
    baseline_logits = ops.cast(baseline_logits, "float32")
    baseline = -ops.log_sigmoid(baseline_logits)
    advantage = ops.stop_gradient(rewards - baseline)
    policy = -ops.sum(advantage * log_prob_samples * weights) / normalizer
    baseline_ce = portable.sigmoid_cross_entropy(ops.exp(-rewards), baseline_logits)
    return policy, ops.sum(baseline_ce * weights) / normalizer, baseline


def reinforce_losses(log_prob_samples, rewards, baseline_logits, weights, normalizer):
    """REINFORCE with a learned baseline.

    Args:
        log_prob_samples: `[B, N]`, log p_G of the sampled tokens (differentiable).
        rewards: `[B, N]`, the discriminator's loss at each sample (no gradient).
        baseline_logits: `[B, N]`, z with baseline `b = -log sigmoid(z)`.
        weights: `[B, N]`, 1 for used slots.
        normalizer: scalar.

    Returns:
        (policy loss, baseline loss, baseline `[B, N]`), the losses as weighted
        sums over `normalizer`.
    """
    if not backend.tensorflow_fast_paths():
        return _portable_reinforce_losses(
            log_prob_samples, rewards, baseline_logits, weights, normalizer
        )
    tf = backend.tensorflow()
    rewards = tf.stop_gradient(tf.cast(rewards, tf.float32))
    baseline_logits = tf.cast(baseline_logits, tf.float32)
    baseline = -tf.math.log_sigmoid(baseline_logits)
    advantage = tf.stop_gradient(rewards - baseline)
    policy = -tf.reduce_sum(advantage * log_prob_samples * weights) / normalizer
    target = tf.exp(-rewards)  # the baseline predicts exp(-R) as a probability
    baseline_ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=baseline_logits)
    return policy, tf.reduce_sum(baseline_ce * weights) / normalizer, baseline


class AdversarialObjective(ElectraObjective):
    """ELECTRA whose generator maximises the discriminator's loss by REINFORCE."""

    name = "adversarial"
    portable = True  # keras.ops; rewards and advantages under stop_gradient on every backend
    extra_metrics = ("reward", "baseline_loss")

    def build_layers(self) -> dict:
        hidden = self.generator.encoder.hidden_dim
        self.baseline = keras.layers.Dense(
            1,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
            dtype=self.config.train.mixed_precision,
            name="reinforce_baseline",
        )
        self.baseline.build((None, None, hidden))
        return {"reinforce_baseline": self.baseline}

    def compiled(self, function):
        """The passes run as traced, never XLA-compiled (see the module docstring)."""
        return function

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        objective = self.config.objective
        token_ids = ops.cast(batch["token_ids"], "int32")
        masked = self.mask(batch, context)
        generator_inputs = {
            "token_ids": masked.masked_ids,
            "segment_ids": batch["segment_ids"],
            "padding_mask": batch["padding_mask"],
        }

        def forward(paused):
            sequence = self.generator.encoder(generator_inputs, training=training)
            logits = ops.cast(
                self.generator.mlm_head(sequence, mask_positions=masked.positions), "float32"
            )
            hidden = sampling.gather_positions(sequence, masked.positions)
            baseline_logits = ops.squeeze(ops.cast(self.baseline(hidden), "float32"), -1)
            log_probs = ops.log_softmax(logits, axis=-1)
            with paused():  # sampling and the discriminator: no generator gradient
                samples = self.sample(logits, masked, context)
                corrupted, labels = sampling.corrupt(
                    token_ids, masked.positions, masked.weights, samples
                )
                detected = self.detect(
                    batch, masked, corrupted, labels, context, training, with_gradients
                )
                rewards = sampling.gather_positions(detected[1]["losses"], masked.positions)
            log_prob_samples = _pick(log_probs, samples)
            policy, baseline_loss, _ = reinforce_losses(
                log_prob_samples,
                rewards,
                baseline_logits,
                masked.weights,
                context.normalizer(masked.weights),
            )
            loss = objective.mlm_weight * policy + objective.baseline_weight * baseline_loss
            return loss, (logits, log_probs, samples, rewards, baseline_loss, detected)

        variables = self.generator.trainable_variables + self.baseline.trainable_variables
        weighted, outputs, grads = self.loss_pass(
            forward, variables, 1.0, context.loss_scale, with_gradients
        )
        logits, log_probs, samples, rewards, baseline_loss, (detector, discriminator) = outputs
        mlm = self.mlm_report(-_pick(log_probs, masked.targets), masked, logits, samples)
        return self.step_output(
            [(variables, weighted, grads), detector],
            with_gradients,
            mlm=mlm,
            discriminator=discriminator,
            extra={"reward": (rewards, masked.weights), "baseline_loss": (baseline_loss, 1.0)},
        )
