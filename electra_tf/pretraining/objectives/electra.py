"""ELECTRA's objective: masked LM for the generator, replaced-token detection for the discriminator.

One step (ELECTRA_SPEC.md, "One training step"):

1. mask the batch (85% [MASK], 15% kept);
2. generator forward; vocabulary logits at the masked positions only; MLM loss;
3. Gumbel-max sample at every masked position, float32, no gradient;
4. scatter the samples in; label 1 where the token changed;
5. discriminator forward on the corrupted input; sigmoid loss over real tokens;
6. loss = mlm_weight * MLM + discriminator_weight * discriminator.

The generator and discriminator passes are separate functions, each computing
its loss and the gradient of its weighted loss. As no gradient flows through
the sampling, the sum of the two passes' gradients is the gradient of the total
loss (the shared embeddings receive both). The split keeps the sampling out of
XLA, where it is several times slower on CPU, while the two passes can be
compiled (`jit_compile`).
"""

from __future__ import annotations

import tensorflow as tf

from electra_tf.ops import losses, sampling
from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives.base import Objective, StepContext, StepOutput, Streams

__all__ = ["ElectraObjective"]


class ElectraObjective(Objective):
    """The paper's objective; see the module docstring."""

    name = "electra"
    reports = ("mlm", "sampling", "discriminator")

    @staticmethod
    def train_flops(config) -> float:
        """Appendix-E FLOPs per step: generator (MLM head) + discriminator (RTD head)."""
        return flops.electra_train_flops(config)

    # The two passes -----------------------------------------------------------------------

    def generator_pass(self, inputs, targets, weights, normalizer, loss_scale, training, grads):
        """Generator forward (and backward): logits `[B, N, V]` f32, loss, per-slot CE, grads."""

        def forward():
            logits = tf.cast(self.generator(inputs, training=training), tf.float32)
            loss, per_slot = losses.masked_lm_loss(logits, targets, weights, normalizer)
            return logits, loss, per_slot

        return self._forward_backward(
            forward,
            self.generator.trainable_variables,
            self.config.objective.mlm_weight * loss_scale,
            grads,
        )

    def discriminator_pass(self, inputs, labels, weights, normalizer, loss_scale, training, grads):
        """Discriminator forward (and backward): logits `[B, S]` f32, loss, per-token, grads."""

        def forward():
            logits = tf.cast(self.discriminator(inputs, training=training), tf.float32)
            loss, per_token = losses.discriminator_loss(logits, labels, weights, normalizer)
            return logits, loss, per_token

        return self._forward_backward(
            forward,
            self.discriminator.trainable_variables,
            self.config.objective.discriminator_weight * loss_scale,
            grads,
        )

    # The step ---------------------------------------------------------------------------------

    def sample(self, logits, masked, context: StepContext):
        """Gumbel-max samples `[B, N]` from the generator's logits `[B, N, V]`."""
        objective = self.config.objective
        vocabulary = self.config.model.vocabulary_size
        n = self.num_predictions
        noise = context.uniform(Streams.GUMBEL, vocabulary, rows_per_example=n)
        noise = tf.reshape(noise, tf.shape(logits))
        return sampling.gumbel_max_sample(
            logits,
            noise,
            temperature=objective.temperature,
            disallow=masked.targets if objective.disallow_correct else None,
        )

    def generate(self, batch, masked, normalizer, context: StepContext, training, with_gradients):
        """Generator pass on the masked batch, then sampling and corruption.

        Returns:
            (logits, mlm loss, per-slot cross-entropy, generator gradients, samples,
            corrupted ids, replaced labels).
        """
        logits, loss, per_slot, grads = self.compiled(self.generator_pass)(
            {
                "token_ids": masked.masked_ids,
                "segment_ids": batch["segment_ids"],
                "padding_mask": batch["padding_mask"],
                "mask_positions": masked.positions,
            },
            masked.targets,
            masked.weights,
            normalizer,
            context.loss_scale,
            training,
            with_gradients,
        )
        samples = self.sample(logits, masked, context)
        token_ids = tf.cast(batch["token_ids"], tf.int32)
        corrupted, labels = sampling.corrupt(token_ids, masked.positions, masked.weights, samples)
        return logits, loss, per_slot, grads, samples, corrupted, labels

    @staticmethod
    def mlm_report(per_slot, masked, logits, samples=None) -> dict:
        """`StepOutput.mlm` of a generator pass."""
        report = {
            "cross_entropy": per_slot,
            "weights": masked.weights,
            "targets": masked.targets,
            "predictions": tf.argmax(logits, axis=-1, output_type=tf.int32),
        }
        if samples is not None:
            report["samples"] = samples
        return report

    def discriminator_weights(self, padding_mask, masked):
        """Float32 `[B, S]` weights of the discriminator loss: every real token."""
        del masked
        return tf.cast(padding_mask, tf.float32)

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        objective = self.config.objective
        padding_mask = batch["padding_mask"]
        segment_ids = batch["segment_ids"]
        masked = self.mask(batch, context)

        mlm_normalizer = context.global_sum(tf.reduce_sum(masked.weights)) + 1e-6
        logits, mlm_loss, per_slot, generator_grads, samples, corrupted, labels = self.generate(
            batch, masked, mlm_normalizer, context, training, with_gradients
        )

        token_weights = self.discriminator_weights(padding_mask, masked)
        discriminator_normalizer = context.global_sum(tf.reduce_sum(token_weights)) + 1e-6
        discriminator_inputs = {
            "token_ids": corrupted,
            "segment_ids": segment_ids,
            "padding_mask": padding_mask,
        }
        disc_logits, disc_loss, per_token, discriminator_grads = self.compiled(
            self.discriminator_pass
        )(
            discriminator_inputs,
            labels,
            token_weights,
            discriminator_normalizer,
            context.loss_scale,
            training,
            with_gradients,
        )

        gradients = None
        if with_gradients:
            gradients = {}
            self.add_gradients(gradients, self.generator.trainable_variables, generator_grads)
            self.add_gradients(
                gradients, self.discriminator.trainable_variables, discriminator_grads
            )
        total = objective.mlm_weight * mlm_loss + objective.discriminator_weight * disc_loss
        return StepOutput(
            loss=total,
            gradients=gradients,
            mlm=self.mlm_report(per_slot, masked, logits, samples),
            discriminator={
                "logits": disc_logits,
                "labels": labels,
                "weights": token_weights,
                "losses": per_token,
                "token_ids": corrupted,
            },
        )
