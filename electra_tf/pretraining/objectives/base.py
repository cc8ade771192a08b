"""What every pre-training objective shares: the step context, its output, the base class.

An objective turns a batch into losses, metric inputs and (when training)
gradients. It owns no variables: the pretrainer holds the generator, the
discriminator and the optimizer, and passes a `StepContext` with the step's
random streams and cross-replica sums. Each forward pass goes through
`Objective.loss_pass`, which weighs its loss and differentiates the weighted
loss, and `Objective.step_output` sums the weighted losses it logs, so the
loss optimised and the loss logged are one number.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from keras import ops

from electra_tf.ops import backend, losses, masking, random, sampling

tf = backend.tensorflow()

__all__ = ["Streams", "StepContext", "StepOutput", "Objective"]


class Streams:
    """Names of the independent random streams drawn each step."""

    POSITIONS = 1  # which positions to mask
    ACTION = 2  # [MASK] / random token / kept
    RANDOM_TOKEN = 3  # the random token, where one is shown
    GUMBEL = 4  # generator sampling noise (Gumbel-max, or inverse-CDF uniforms)
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
    step: Any
    example_index: Any
    num_replicas: int
    loss_scale: Any = 1.0

    def uniform(self, stream: int, num_columns: int, rows_per_example: int = 1):
        """Uniforms `[B * rows_per_example, C]` for one stream of this step."""
        rows = self.example_index
        if rows_per_example > 1:
            rows = rows[:, None] * rows_per_example + ops.arange(rows_per_example)[None, :]
            rows = ops.reshape(rows, (-1,))
        keys = random.row_keys(self.seed, self.step, stream, rows)
        return random.uniform(keys, num_columns)

    def normalizer(self, weights):
        """The global sum of `weights` over all replicas (plus 1e-6): a loss's denominator."""
        return self.global_sum(ops.sum(weights)) + 1e-6

    def global_sum(self, value):
        """Sum of a scalar over all replicas (the value itself on one replica).

        On JAX and PyTorch the step sees the whole batch (JAX shards it by
        `keras.distribution`, with global sums), so the value is already global.
        """
        value = ops.cast(value, "float32")
        if backend.name() != "tensorflow":
            return value
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
        trained: `id`s of the variables the step's passes train (a model an objective
            freezes or leaves unused is not among them): the JAX and PyTorch steps,
            which differentiate the total loss, update these only, as TensorFlow does.
    """

    loss: Any
    gradients: dict | None = None
    mlm: dict | None = None
    discriminator: dict | None = None
    extra: dict = dataclasses.field(default_factory=dict)
    trained: tuple = ()


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
    #: whether the objective is written in keras.ops and trains every variable of both
    #: models, so that the JAX and PyTorch steps (one loss, one gradient) can run it.
    portable = False

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

    # Passes: the one place a forward pass becomes (weighted loss, outputs, gradients) -------

    @staticmethod
    def loss_pass(forward, variables, weight, loss_scale, with_gradients):
        """Runs `forward` and weighs its loss; differentiates the weighted loss when training.

        Every objective's pass goes through here, so the loss an objective logs
        (the sum of its passes' weighted losses, `step_output`) is the loss whose
        gradients it applies.

        Args:
            forward: `forward(paused)` -> (loss, outputs): the unweighted scalar loss
                and a tuple of tensors; `paused()` is a context manager in which ops
                are not differentiated (for work, such as sampling and the
                discriminator under REINFORCE, that must not reach these variables).
            variables: the variables to differentiate.
            weight: the loss's weight in the objective (a Python float).
            loss_scale: float32 scalar multiplying the loss before differentiation.
            with_gradients: False runs the forward pass only.

        Returns:
            (weight * loss, outputs, gradients of `variables`; an empty list when not
            differentiating).
        """
        if not with_gradients:
            loss, outputs = forward(contextlib.nullcontext)
            return weight * loss, outputs, []
        if backend.name() != "tensorflow":
            raise ValueError(
                "Objective passes differentiate on TensorFlow only; on JAX and PyTorch "
                "ElectraPretrainer's step differentiates the whole objective."
            )
        with tf.GradientTape() as tape:
            loss, outputs = forward(tape.stop_recording)
            weighted = weight * loss
            scaled = tf.cast(loss_scale, tf.float32) * weighted
        return weighted, outputs, tape.gradient(scaled, variables)

    def mlm_pass(
        self, model, inputs, targets, weights, normalizer, weight, loss_scale, training, grads
    ):
        """MLM forward (and backward) of `model`.

        Returns:
            (weighted loss, (logits `[B, N, V]` f32, per-slot cross-entropy `[B, N]`), grads).
        """

        def forward(paused):
            del paused
            logits = ops.cast(model(inputs, training=training), "float32")
            loss, per_slot = losses.masked_lm_loss(logits, targets, weights, normalizer)
            return loss, (logits, per_slot)

        return self.loss_pass(forward, model.trainable_variables, weight, loss_scale, grads)

    def model_pass(self, inputs, targets, weights, normalizer, loss_scale, training, grads):
        """The MLM pass of `self.model`, the discriminator-sized masked LM that `bert_mlm`
        and `replace_mlm` train (built by `discriminator_mlm`), at `mlm_weight`."""
        weight = self.config.objective.mlm_weight
        return self.mlm_pass(
            self.model, inputs, targets, weights, normalizer, weight, loss_scale, training, grads
        )

    def predict_masked(self, token_ids, batch, masked, context, training, with_gradients):
        """`model_pass` reading `token_ids` (masked or corrupted) and predicting the original
        tokens at the masked positions.

        Returns:
            (weighted loss, (logits `[B, N, V]` f32, per-slot cross-entropy `[B, N]`), grads).
        """
        inputs = {
            "token_ids": token_ids,
            "segment_ids": batch["segment_ids"],
            "padding_mask": batch["padding_mask"],
            "mask_positions": masked.positions,
        }
        return self.compiled(self.model_pass)(
            inputs,
            masked.targets,
            masked.weights,
            context.normalizer(masked.weights),
            context.loss_scale,
            training,
            with_gradients,
        )

    def detection_pass(
        self, inputs, labels, token_weights, normalizer, weight, loss_scale, training, grads
    ):
        """Discriminator forward (and backward) on corrupted `inputs`.

        Returns:
            (weighted loss, (logits `[B, S]` f32, per-token loss `[B, S]`), grads).
        """

        def forward(paused):
            del paused
            logits = ops.cast(self.discriminator(inputs, training=training), "float32")
            loss, per_token = losses.discriminator_loss(logits, labels, token_weights, normalizer)
            return loss, (logits, per_token)

        variables = self.discriminator.trainable_variables
        return self.loss_pass(forward, variables, weight, loss_scale, grads)

    @staticmethod
    def step_output(passes, with_gradients: bool, **reports) -> StepOutput:
        """A `StepOutput` whose loss is the sum of the passes' weighted losses.

        Args:
            passes: (variables, weighted loss, gradients) of each pass that trains.
            with_gradients: whether the gradients are collected.
            **reports: `mlm`, `discriminator` and `extra`, as `StepOutput` takes them.
        """
        weighted = [weighted for _, weighted, _ in passes]
        if backend.tensorflow_fast_paths():  # one AddN in TensorFlow's graph
            loss = tf.add_n(weighted)
        else:
            loss = weighted[0]
            for other in weighted[1:]:
                loss = loss + other
        gradients = None
        if with_gradients:
            gradients = {}
            for variables, _, grads in passes:
                Objective.add_gradients(gradients, variables, grads)
        trained = tuple(dict.fromkeys(id(v) for variables, _, _ in passes for v in variables))
        return StepOutput(loss=loss, gradients=gradients, trained=trained, **reports)

    @staticmethod
    def mlm_report(per_slot, masked, logits, samples=None) -> dict:
        """`StepOutput.mlm` of an MLM pass (`samples`: what was sampled there, if anything)."""
        report = {
            "cross_entropy": per_slot,
            "weights": masked.weights,
            "targets": masked.targets,
            "predictions": sampling.block_argmax(logits),
        }
        if samples is not None:
            report["samples"] = samples
        return report

    @staticmethod
    def detection_report(logits, labels, token_weights, per_token, corrupted) -> dict:
        """`StepOutput.discriminator` of a detection pass."""
        return {
            "logits": logits,
            "labels": labels,
            "weights": token_weights,
            "losses": per_token,
            "token_ids": corrupted,
        }

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
        length = token_ids.shape[1] or ops.shape(token_ids)[1]
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
        """`function` as a `tf.function`, XLA-compiled when `jit_compile` is on (TensorFlow;
        on JAX the whole step is compiled by Keras)."""
        if not self.jit_compile or backend.name() != "tensorflow":
            return function
        key = function.__name__
        if key not in self._compiled:
            self._compiled[key] = tf.function(function, jit_compile=True, reduce_retracing=True)
        return self._compiled[key]

    @staticmethod
    def add_gradients(total: dict, variables, gradients):
        """Adds `gradients` of `variables` into `total` (keyed by variable id)."""
        for variable, gradient in zip(variables, gradients, strict=True):
            if gradient is None:
                continue
            if tf is not None and isinstance(gradient, tf.IndexedSlices):
                gradient = tf.convert_to_tensor(gradient)
            key = id(variable)
            total[key] = gradient if key not in total else total[key] + gradient
        return total

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        raise NotImplementedError
