"""Replace MLM (paper, Section 3.5): masked positions show generator samples, not [MASK].

The generator is trained and sampled exactly as in ELECTRA; the
discriminator-sized model then reads the corrupted sequence and, as a masked
LM, predicts the original token at every masked position (whether or not the
sample happened to be correct). It removes BERT's pre-train/fine-tune
mismatch of the [MASK] token but still learns from ~15% of the tokens (paper,
base size: GLUE 82.4 against ELECTRA's 85.0).
"""

from __future__ import annotations

from keras import ops

from electra_tf.ops import backend
from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives.base import StepContext
from electra_tf.pretraining.objectives.electra import ElectraObjective

__all__ = ["ReplaceMlmObjective"]


def _argmax(logits):
    """int32 argmax over the last axis: TensorFlow's op on its fast paths (the graph it had),
    `keras.ops.argmax` elsewhere; the first maximum on ties either way."""
    if backend.tensorflow_fast_paths():
        return backend.tensorflow().argmax(logits, axis=-1, output_type="int32")
    return ops.cast(ops.argmax(logits, axis=-1), "int32")


class ReplaceMlmObjective(ElectraObjective):
    """Generator samples in, original tokens out, at the masked positions."""

    name = "replace_mlm"
    portable = True  # written in keras.ops: trains on JAX and PyTorch too
    reports = ("mlm", "sampling")
    extra_metrics = ("disc_mlm_loss", "disc_mlm_accuracy")

    def build_layers(self) -> dict:
        self.model = self.discriminator_mlm()
        return {"discriminator_mlm": self.model}

    @staticmethod
    def train_flops(config) -> float:
        """Generator (MLM head) + discriminator-sized model with an MLM head at masked positions."""
        disc, gen = flops.model_shapes(config)
        batch = config.train.batch_size
        return disc.train(batch, 1.0, "mlm") + gen.train(batch, 1.0, "mlm")

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        masked = self.mask(batch, context)
        generator, mlm, corrupted, _ = self.generate(
            batch, masked, context, training, with_gradients
        )
        weighted, (logits, per_slot), grads = self.predict_masked(
            corrupted, batch, masked, context, training, with_gradients
        )
        predictions = _argmax(logits)
        correct = ops.cast(ops.equal(predictions, masked.targets), "float32")
        return self.step_output(
            [generator, (self.model.trainable_variables, weighted, grads)],
            with_gradients,
            mlm=mlm,
            extra={
                "disc_mlm_loss": (per_slot, masked.weights),
                "disc_mlm_accuracy": (correct, masked.weights),
            },
        )
