"""BERT's masked language model, the paper's baseline (Section 3.2).

One model, the size of ELECTRA's discriminator (its encoder plus a tied MLM
head), predicts the original token at the masked positions. Same data and
masking code as ELECTRA; the baseline's showing is BERT's 80% [MASK] / 10%
random token / 10% kept, set by `objective.mask_token_rate=0.8` and
`objective.random_token_rate=0.1` (the experiment presets do). No generator
runs and the replaced-token head is not trained; fine-tuning reads the
encoder as for ELECTRA.
"""

from __future__ import annotations

from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives.base import Objective, StepContext

__all__ = ["BertMlmObjective"]


class BertMlmObjective(Objective):
    """Masked-LM pre-training of the discriminator-sized encoder."""

    name = "bert_mlm"
    portable = True  # keras.ops; the portable step trains only `self.model` (StepOutput.trained)
    reports = ("mlm",)

    def build_layers(self) -> dict:
        self.model = self.discriminator_mlm()
        return {"discriminator_mlm": self.model}

    @staticmethod
    def train_flops(config) -> float:
        """A discriminator-sized model with an MLM head at the masked positions."""
        disc, _ = flops.model_shapes(config)
        return disc.train(config.train.batch_size, 1.0, "mlm")

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        masked = self.mask(batch, context)
        weighted, (logits, per_slot), grads = self.predict_masked(
            masked.masked_ids, batch, masked, context, training, with_gradients
        )
        return self.step_output(
            [(self.model.trainable_variables, weighted, grads)],
            with_gradients,
            mlm=self.mlm_report(per_slot, masked, logits),
        )
