"""What every pre-training objective shares: the step context, its output, the base class.

An objective turns a batch into losses, metric inputs and (when training)
gradients. It owns no variables: the pretrainer holds the generator, the
discriminator and the optimizer, and passes an `StepContext` with the step's
random streams and cross-replica sums.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import tensorflow as tf

from electra_tf.ops import losses, masking, random

__all__ = ["Streams", "StepContext", "StepOutput", "Objective"]


class Streams:
    """Names of the independent random streams drawn each step."""

    POSITIONS = 1  # which positions to mask
    ACTION = 2  # [MASK] / random token / kept
    RANDOM_TOKEN = 3  # the random token, where one is shown
    GUMBEL = 4  # generator sampling noise
    EXTRA = 5  # first stream free for an objective's own use


@dataclasses.dataclass
class StepContext:
    """Per-step facts an objective needs, valid inside one replica.

    Attributes:
        seed: the run's seed.
        step: int64 scalar, the optimizer step (the eval counter offset in evaluation).
        example_index: int32 `[B]`, each local example's index in the global batch.
        num_replicas: int.
        loss_scale: float32 scalar multiplying the loss before differentiation
            (the dynamic loss scale under mixed_float16, 1.0 otherwise).
    """

    seed: int
    step: tf.Tensor
    example_index: tf.Tensor
    num_replicas: int
    loss_scale: Any = 1.0

    def uniform(self, stream: int, num_columns: int, rows_per_example: int = 1) -> tf.Tensor:
        """Uniforms `[B * rows_per_example, C]` for one stream of this step."""
        rows = self.example_index
        if rows_per_example > 1:
            rows = rows[:, None] * rows_per_example + tf.range(rows_per_example)[None, :]
            rows = tf.reshape(rows, [-1])
        keys = random.row_keys(self.seed, self.step, stream, rows)
        return random.uniform(keys, num_columns)

    def global_sum(self, value) -> tf.Tensor:
        """Sum of a scalar over all replicas (the value itself on one replica)."""
        value = tf.cast(value, tf.float32)
        context = tf.distribute.get_replica_context()
        if context is None or context.num_replicas_in_sync == 1:
            return value
        return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


@dataclasses.dataclass
class StepOutput:
    """What one objective step produced.

    Attributes:
        loss: scalar, this replica's share of the global total loss (the
            replicas' shares sum to the total).
        gradients: dict from `id(variable)` to gradient, or None when not training.
        mlm: optional dict with per-slot `cross_entropy`, `weights`, `targets`,
            `predictions` and, where sampled, `samples`; all `[B, N]`.
        discriminator: optional dict with `logits`, `labels`, `weights`,
            per-token `losses` and the corrupted `token_ids` it read, all `[B, S]`.
        extra: objective-specific scalars to log (name -> (value, weight)).
    """

    loss: tf.Tensor
    gradients: dict | None = None
    mlm: dict | None = None
    discriminator: dict | None = None
    extra: dict = dataclasses.field(default_factory=dict)


class Objective:
    """Base class: masking shared by all objectives, and gradient bookkeeping.

    Subclasses implement `__call__(batch, context, training, with_gradients)`
    returning a `StepOutput`.

    Args:
        config: the run's `ElectraConfig`.
        generator: the `ElectraGenerator` (or None for generator-free objectives).
        discriminator: the `ElectraDiscriminator` (or None).
    """

    name = "base"
    #: keys of the metric groups this objective reports: "mlm", "sampling", "discriminator".
    reports = ("mlm", "sampling", "discriminator")
    #: names of objective-specific mean metrics, fed through `StepOutput.extra`.
    extra_metrics: tuple = ()

    def __init__(self, config, generator, discriminator):
        self.config = config
        self.generator = generator
        self.discriminator = discriminator
        self.jit_compile = False
        self._compiled = {}
        data = config.data
        self.special_ids = (data.cls_id, data.sep_id, data.mask_id, data.pad_id)
        self.num_predictions = config.num_predictions

    def build_layers(self) -> dict:
        """Layers this objective adds beside the two models (the pretrainer tracks them).

        Called once by the pretrainer, inside its strategy scope, after both
        models are built; returns name -> built layer. The default adds none.
        """
        return {}

    def discriminator_mlm(self):
        """An MLM head on the discriminator's encoder (tied to its word table), for MLM baselines.

        Returns an `ElectraGenerator` that shares the discriminator's encoder:
        the model BERT MLM, Replace MLM and All-Tokens MLM train, and the one
        fine-tuning later reads (as the discriminator's encoder).
        """
        from electra_tf.models.generator import ElectraGenerator

        model = ElectraGenerator(
            encoder=self.discriminator.encoder,
            dtype=self.config.train.mixed_precision,
            name="discriminator_mlm",
        )
        model.build()
        return model

    def mlm_pass(self, model, inputs, targets, weights, normalizer, loss_scale, training, grads):
        """MLM forward (and backward) of `model`: logits `[B, N, V]` f32, loss, per-slot, grads."""

        def forward():
            logits = tf.cast(model(inputs, training=training), tf.float32)
            loss, per_slot = losses.masked_lm_loss(logits, targets, weights, normalizer)
            return logits, loss, per_slot

        return self._forward_backward(forward, model.trainable_variables, loss_scale, grads)

    def trace_key(self) -> tuple:
        """Python state the traced step depends on (a change needs a retrace)."""
        return ()

    def callbacks(self) -> list:
        """Keras callbacks `ElectraPretrainer.fit` adds for this objective (none by default)."""
        return []

    @staticmethod
    def train_flops(config) -> float:
        """Appendix-E training FLOPs of one step of this objective (see `pretraining.flops`)."""
        raise NotImplementedError

    def mask(self, batch, context: StepContext, mask_token_rate=None, random_token_rate=None):
        """Dynamic masking of `batch["token_ids"]` with this step's random draws."""
        objective = self.config.objective
        token_ids = batch["token_ids"]
        length = token_ids.shape[1] or tf.shape(token_ids)[1]
        n = self.num_predictions
        return masking.mask_batch(
            token_ids,
            batch["padding_mask"],
            position_scores=context.uniform(Streams.POSITIONS, length),
            action_draw=context.uniform(Streams.ACTION, n),
            token_draw=context.uniform(Streams.RANDOM_TOKEN, n),
            special_ids=self.special_ids,
            mask_id=self.config.data.mask_id,
            vocabulary_size=self.config.model.vocabulary_size,
            mask_rate=objective.mask_rate,
            max_predictions=n,
            mask_token_rate=(
                objective.mask_token_rate if mask_token_rate is None else mask_token_rate
            ),
            random_token_rate=(
                objective.random_token_rate if random_token_rate is None else random_token_rate
            ),
        )

    def reset_compiled(self):
        """Forgets compiled passes (after `jit_compile` changes)."""
        self._compiled = {}

    def compiled(self, function):
        """`function` as a `tf.function`, XLA-compiled when `jit_compile` is on."""
        if not self.jit_compile:
            return function
        key = function.__name__
        if key not in self._compiled:
            self._compiled[key] = tf.function(function, jit_compile=True, reduce_retracing=True)
        return self._compiled[key]

    @staticmethod
    def _forward_backward(forward, variables, scale, with_gradients):
        """Runs `forward()` -> (outputs..., loss, ...) and differentiates `scale * loss`.

        `forward` returns a tuple whose second item is the loss. Returns the
        tuple plus the gradients of `variables` (an empty list when not training).
        """
        if not with_gradients:
            return (*forward(), [])
        with tf.GradientTape() as tape:
            outputs = forward()
            scaled = tf.cast(scale, tf.float32) * outputs[1]
        return (*outputs, tape.gradient(scaled, variables))

    @staticmethod
    def add_gradients(total: dict, variables, gradients):
        """Adds `gradients` of `variables` into `total` (keyed by variable id)."""
        for variable, gradient in zip(variables, gradients, strict=True):
            if gradient is None:
                continue
            if isinstance(gradient, tf.IndexedSlices):
                gradient = tf.convert_to_tensor(gradient)
            key = id(variable)
            total[key] = gradient if key not in total else total[key] + gradient
        return total

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        raise NotImplementedError
