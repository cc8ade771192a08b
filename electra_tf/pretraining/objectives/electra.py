"""ELECTRA's objective: masked LM for the generator, replaced-token detection for the discriminator.

One step (ELECTRA_SPEC.md, "One training step"):

1. mask the batch (85% [MASK], 15% kept);
2. generator forward; vocabulary logits at the masked positions only; MLM loss;
3. Gumbel-max sample at every masked position, float32, no gradient;
4. scatter the samples in; label 1 where the token changed;
5. discriminator forward on the corrupted input; sigmoid loss over real tokens;
6. loss = mlm_weight * MLM + discriminator_weight * discriminator.

The generator and discriminator passes are separate functions, each computing
its loss and the gradient of its weighted loss (`Objective.loss_pass`). As no
gradient flows through the sampling, the sum of the two passes' gradients is
the gradient of the total loss (the shared embeddings receive both). The split
keeps the sampling out of XLA, where it is several times slower on CPU, while
the two passes can be compiled (`jit_compile`).
"""

from __future__ import annotations

from keras import ops

from electra_tf.ops import sampling
from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives.base import Objective, StepContext, Streams

__all__ = ["ElectraObjective"]


class ElectraObjective(Objective):
    """The paper's objective; see the module docstring."""

    name = "electra"
    reports = ("mlm", "sampling", "discriminator")
    portable = True  # written in keras.ops: trains on JAX and PyTorch too

    @staticmethod
    def train_flops(config) -> float:
        """Appendix-E FLOPs per step: generator (MLM head) + discriminator (RTD head)."""
        return flops.electra_train_flops(config)

    def generator_pass(self, inputs, targets, weights, normalizer, loss_scale, training, grads):
        """The generator's MLM pass, weighted by `objective.mlm_weight` (see `mlm_pass`)."""
        return self.mlm_pass(
            self.generator,
            inputs,
            targets,
            weights,
            normalizer,
            self.config.objective.mlm_weight,
            loss_scale,
            training,
            grads,
        )

    def discriminator_pass(self, inputs, labels, weights, normalizer, loss_scale, training, grads):
        """The detection pass, weighted by `objective.discriminator_weight`."""
        return self.detection_pass(
            inputs,
            labels,
            weights,
            normalizer,
            self.config.objective.discriminator_weight,
            loss_scale,
            training,
            grads,
        )

    def sample(self, logits, masked, context: StepContext):
        """Samples `[B, N]` from the generator's logits `[B, N, V]` (`objective.sampler`)."""
        objective = self.config.objective
        n = self.num_predictions
        disallow = masked.targets if objective.disallow_correct else None
        if objective.sampler == "gumbel":
            vocabulary = self.config.model.vocabulary_size
            noise = context.uniform(Streams.GUMBEL, vocabulary, rows_per_example=n)
            return sampling.gumbel_max_sample(
                logits,
                ops.reshape(noise, ops.shape(logits)),
                temperature=objective.temperature,
                disallow=disallow,
            )
        uniform = context.uniform(Streams.GUMBEL, 1, rows_per_example=n)
        return sampling.inverse_cdf_sample(
            logits,
            ops.reshape(uniform, ops.shape(logits)[:-1]),
            temperature=objective.temperature,
            disallow=disallow,
        )

    def generate(self, batch, masked, context: StepContext, training, with_gradients, sample=True):
        """Generator pass on the masked batch, then (unless `sample` is False) sampling and
        corruption.

        Returns:
            (generator pass `(variables, weighted loss, grads)`, its `StepOutput.mlm`
            report, corrupted ids `[B, S]`, replaced labels `[B, S]`); without sampling
            the last two are None.
        """
        weighted, (logits, per_slot), grads = self.compiled(self.generator_pass)(
            {
                "token_ids": masked.masked_ids,
                "segment_ids": batch["segment_ids"],
                "padding_mask": batch["padding_mask"],
                "mask_positions": masked.positions,
            },
            masked.targets,
            masked.weights,
            context.normalizer(masked.weights),
            context.loss_scale,
            training,
            with_gradients,
        )
        generator = (self.generator.trainable_variables, weighted, grads)
        if not sample:
            return generator, self.mlm_report(per_slot, masked, logits), None, None
        samples = self.sample(logits, masked, context)
        token_ids = ops.cast(batch["token_ids"], "int32")
        corrupted, labels = sampling.corrupt(token_ids, masked.positions, masked.weights, samples)
        return generator, self.mlm_report(per_slot, masked, logits, samples), corrupted, labels

    def discriminator_weights(self, padding_mask, masked):
        """Float32 `[B, S]` weights of the discriminator loss: every real token."""
        del masked
        return ops.cast(padding_mask, "float32")

    def detect(self, batch, masked, corrupted, labels, context, training, with_gradients):
        """Detection pass on the corrupted batch.

        Returns:
            (discriminator pass `(variables, weighted loss, grads)`, its
            `StepOutput.discriminator` report).
        """
        token_weights = self.discriminator_weights(batch["padding_mask"], masked)
        inputs = {
            "token_ids": corrupted,
            "segment_ids": batch["segment_ids"],
            "padding_mask": batch["padding_mask"],
        }
        weighted, (logits, per_token), grads = self.compiled(self.discriminator_pass)(
            inputs,
            labels,
            token_weights,
            context.normalizer(token_weights),
            context.loss_scale,
            training,
            with_gradients,
        )
        report = self.detection_report(logits, labels, token_weights, per_token, corrupted)
        return (self.discriminator.trainable_variables, weighted, grads), report

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        masked = self.mask(batch, context)
        generator, mlm, corrupted, labels = self.generate(
            batch, masked, context, training, with_gradients
        )
        detector, discriminator = self.detect(
            batch, masked, corrupted, labels, context, training, with_gradients
        )
        return self.step_output(
            [generator, detector], with_gradients, mlm=mlm, discriminator=discriminator
        )
