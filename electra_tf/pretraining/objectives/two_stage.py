"""Two-stage ELECTRA (paper, Section 3.2): generator first, then the discriminator from it.

Stage 1 trains only the generator, with MLM, for `objective.stage_one_steps`
steps (default: half of `train.num_steps`). At the switch the discriminator's
encoder is initialised with the generator's encoder weights, and stage 2
trains only the discriminator with the replaced-token objective, sampling
from the now frozen generator (no gradient, no weight decay reaches it).
The two encoders must have the same shape and share nothing
(`model.generator_size_fraction=1.0`, `model.weight_tying=none`).

The stage is part of the traced step: the `TwoStageSwitch` callback, which
`ElectraPretrainer.fit` adds, copies the weights and retraces the step at the
switch; a run resumed past the switch starts in stage 2.
"""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.config import ConfigError
from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives.base import StepContext
from electra_tf.pretraining.objectives.electra import ElectraObjective

__all__ = ["TwoStageObjective", "TwoStageSwitch"]


class TwoStageObjective(ElectraObjective):
    """Generator-only MLM, then discriminator-only replaced-token detection."""

    name = "two_stage"
    portable = True  # keras.ops; each stage trains one model (StepOutput.trained)

    def __init__(self, config, generator, discriminator):
        super().__init__(config, generator, discriminator)
        model = config.model
        if model.generator_size_fraction != 1.0 or model.weight_tying != "none":
            raise ConfigError(
                "objective.name=two_stage initialises the discriminator from the generator, so "
                "it needs model.generator_size_fraction=1.0 and model.weight_tying=none (got "
                f"{model.generator_size_fraction} and {model.weight_tying!r})."
            )
        self.stage_one_steps = self.switch_step(config)
        self.stage = 1

    @staticmethod
    def switch_step(config) -> int:
        """The first step of stage 2."""
        return config.objective.stage_one_steps or max(1, config.train.num_steps // 2)

    @staticmethod
    def train_flops(config) -> float:
        """Per step, averaged over the run: stage 1 trains the generator; stage 2 trains the
        discriminator and runs the generator forward only (1/2 of its training cost)."""
        disc, gen = flops.model_shapes(config)
        batch = config.train.batch_size
        total = config.train.num_steps
        first = min(TwoStageObjective.switch_step(config), total)
        stage_one = gen.train(batch, 1.0, "mlm")
        stage_two = disc.train(batch, 1.0, "rtd") + 0.5 * gen.train(batch, 1.0, "mlm")
        return (first * stage_one + (total - first) * stage_two) / max(total, 1)

    def callbacks(self) -> list:
        return [TwoStageSwitch(self)]

    def trace_key(self) -> tuple:
        return (self.stage,)

    def copy_generator_to_discriminator(self):
        """Assigns the generator encoder's weights to the discriminator's encoder."""
        source = self.generator.encoder.weights
        target = self.discriminator.encoder.weights
        if [tuple(w.shape) for w in source] != [tuple(w.shape) for w in target]:
            raise ValueError("two_stage: the generator and discriminator encoders differ in shape.")
        for to, value in zip(target, source, strict=True):
            # A copy: on JAX two variables must not hold one buffer (the step donates both).
            to.assign(ops.copy(value))

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        masked = self.mask(batch, context)
        stage_one = self.stage == 1
        # Stage 2 samples from the frozen generator: its pass runs forward only.
        generator, mlm, corrupted, labels = self.generate(
            batch, masked, context, training, with_gradients and stage_one, sample=not stage_one
        )
        if stage_one:
            return self.step_output([generator], with_gradients, mlm=mlm)
        detector, discriminator = self.detect(
            batch, masked, corrupted, labels, context, training, with_gradients
        )
        return self.step_output([detector], with_gradients, mlm=mlm, discriminator=discriminator)


class TwoStageSwitch(keras.callbacks.Callback):
    """Switches a `TwoStageObjective` to stage 2 at its step, copying weights once."""

    def __init__(self, objective: TwoStageObjective):
        super().__init__()
        self.objective = objective

    def _set_stage(self, stage):
        if self.objective.stage != stage:
            self.objective.stage = stage
            self.model.make_train_function(force=True)  # retrace the step for the new stage

    def on_train_begin(self, logs=None):
        # A run resumed after the switch step is in stage 2 (its checkpoint holds the trained
        # discriminator); at the switch step itself the copy is still to come.
        step = int(self.model.optimizer.iterations.numpy())
        self._set_stage(2 if step > self.objective.stage_one_steps else 1)

    def on_train_batch_begin(self, batch, logs=None):
        if self.objective.stage == 2:
            return
        if int(self.model.optimizer.iterations.numpy()) >= self.objective.stage_one_steps:
            self.objective.copy_generator_to_discriminator()
            self._set_stage(2)
