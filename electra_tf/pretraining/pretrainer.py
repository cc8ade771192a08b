"""`ElectraPretrainer`: the generator, the discriminator and one custom `train_step`."""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.config import ElectraConfig, load_recipe
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.models.generator import ElectraGenerator
from electra_tf.ops import backend
from electra_tf.pretraining.objectives import StepContext, make_objective
from electra_tf.pretraining.optimizer import ElectraAdamW, build_optimizer
from electra_tf.pretraining.portable_step import _EVAL_SEED_OFFSET, PortableSteps

tf = backend.tensorflow()

__all__ = ["ElectraPretrainer"]


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainer(PortableSteps, keras.Model):
    """Joint generator/discriminator pre-training, driven by `fit`.

    Construct it inside `strategy.scope()`: both sub-models are built in the
    constructor, so every variable exists before `fit` (a generator variable
    created lazily inside a replica fails under `MirroredStrategy`). `compile()`
    with no arguments uses the config's optimizer (AdamW, warmup and linear
    decay); `jit_compile` compiles the generator and discriminator passes with
    XLA (not the whole step, which fails under `MirroredStrategy` on CPU and
    would put the sampling in XLA, where it is slower).

    The batch is a dict of int `token_ids`, `padding_mask` and `segment_ids`,
    each `[B, S]` (or a `(features, labels)` tuple whose labels are ignored).
    Masking and sampling happen in the step, fresh every step, as a pure
    function of `(config.train.seed, step, global example index)`: a resumed
    run and a run on any number of replicas draw the same numbers.

    Args:
        config: an `ElectraConfig` (or its dict).
        **kwargs: passed to `keras.Model` (`name`).

    Example:

    >>> config = load_recipe("tiny").override(
    ...     "model.vocabulary_size=120", "model.num_layers=1", "data.sequence_length=16",
    ...     "train.batch_size=4", "train.num_steps=4", "train.warmup_steps=0")
    >>> pretrainer = ElectraPretrainer(config)
    >>> pretrainer.compile()
    >>> ids = np.random.default_rng(0).integers(104, 120, size=(8, 16)).astype("int32")
    >>> ids[:, 0], ids[:, -1] = 101, 102
    >>> batch = {"token_ids": ids, "padding_mask": np.ones_like(ids),
    ...          "segment_ids": np.zeros_like(ids)}
    >>> history = pretrainer.fit(tf.data.Dataset.from_tensor_slices(batch).batch(4),
    ...                          epochs=1, verbose=0)
    >>> sorted(history.history)[:4]
    ['disc_accuracy', 'disc_auc', 'disc_loss', 'disc_precision']
    """

    def __init__(
        self, config: ElectraConfig | dict | None = None, name="electra_pretrainer", **kwargs
    ):
        if config is None:
            config = ElectraConfig()
        elif isinstance(config, dict):
            config = ElectraConfig.from_dict(config)
        policy = config.train.mixed_precision
        super().__init__(name=name, dtype=policy, **kwargs)
        self.config = config
        model = config.model

        self.discriminator = ElectraDiscriminator(dtype=policy, **model.discriminator().to_dict())
        if model.weight_tying == "all":
            generator_encoder = self.discriminator.encoder
        else:
            shared = None
            if model.weight_tying == "embeddings":
                shared = self.discriminator.encoder.embeddings
            generator_encoder = ElectraEncoder(
                embeddings=shared, dtype=policy, name="encoder", **model.generator().to_dict()
            )
        self.generator = ElectraGenerator(encoder=generator_encoder, dtype=policy)
        self.discriminator.build()
        self.generator.build()

        self.objective = make_objective(config, self.generator, self.discriminator)
        # Heads some objectives add (an MLM head on the discriminator, a REINFORCE baseline).
        self.objective_layers = self.objective.build_layers()
        self._trackers = self._make_trackers(self.objective.reports, self.objective.extra_metrics)
        self._eval_counter = keras.Variable(
            0,
            dtype="int64",
            trainable=False,
            name="eval_counter",
            aggregation="only_first_replica",
        )
        self.built = True

    @classmethod
    def from_recipe(cls, recipe: str = "small", *overrides: str, **kwargs) -> ElectraPretrainer:
        """A pretrainer from a named recipe (or TOML path) and dotted overrides."""
        return cls(load_recipe(recipe).override(*overrides), **kwargs)

    # Metrics -----------------------------------------------------------------------------------

    @staticmethod
    def _make_trackers(reports, extra_metrics=()) -> dict:
        mean = keras.metrics.Mean
        trackers = {"loss": mean(name="loss")}
        if "mlm" in reports:
            trackers["mlm_loss"] = mean(name="mlm_loss")
            trackers["mlm_accuracy"] = mean(name="mlm_accuracy")
        if "sampling" in reports:
            trackers["sampled_accuracy"] = mean(name="sampled_accuracy")
        if "discriminator" in reports:
            trackers["disc_loss"] = mean(name="disc_loss")
            trackers["disc_accuracy"] = mean(name="disc_accuracy")
            trackers["disc_precision"] = keras.metrics.Precision(name="disc_precision")
            trackers["disc_recall"] = keras.metrics.Recall(name="disc_recall")
            # 1000 thresholds: a weak discriminator's probabilities sit in a narrow band that
            # the default 200 bins resolve coarsely (the demo also reports the exact AUC).
            trackers["disc_auc"] = keras.metrics.AUC(num_thresholds=1000, name="disc_auc")
            trackers["replaced_fraction"] = mean(name="replaced_fraction")
        for name in extra_metrics:
            trackers[name] = mean(name=name)
        return trackers

    @property
    def metrics(self):
        return list(self._trackers.values())

    def _update_metrics(self, output, num_replicas):
        t = self._trackers
        # The replicas' loss shares sum to the global loss; Keras averages replica logs.
        t["loss"].update_state(output.loss * num_replicas)
        if output.mlm is not None:
            m = output.mlm
            if "mlm_loss" in t and "cross_entropy" in m:
                t["mlm_loss"].update_state(m["cross_entropy"], sample_weight=m["weights"])
                correct = ops.cast(ops.equal(m["predictions"], m["targets"]), "float32")
                t["mlm_accuracy"].update_state(correct, sample_weight=m["weights"])
            if "sampled_accuracy" in t and "samples" in m:
                same = ops.cast(ops.equal(m["samples"], m["targets"]), "float32")
                t["sampled_accuracy"].update_state(same, sample_weight=m["weights"])
        if output.discriminator is not None and "disc_loss" in t:
            d = output.discriminator
            labels, weights = d["labels"], d["weights"]
            t["disc_loss"].update_state(d["losses"], sample_weight=weights)
            predicted = ops.cast(d["logits"] > 0.0, labels.dtype)
            correct = ops.cast(ops.equal(predicted, labels), "float32")
            t["disc_accuracy"].update_state(correct, sample_weight=weights)
            probabilities = ops.sigmoid(d["logits"])
            for name in ("disc_precision", "disc_recall", "disc_auc"):
                t[name].update_state(labels, probabilities, sample_weight=weights)
            t["replaced_fraction"].update_state(ops.cast(labels, "float32"), sample_weight=weights)
        for name, (value, weight) in output.extra.items():
            if name not in t:
                continue
            t[name].update_state(value, sample_weight=weight)
        return {name: tracker.result() for name, tracker in t.items()}

    # Steps -------------------------------------------------------------------------------------

    @staticmethod
    def _as_batch(data):
        if isinstance(data, (tuple, list)):
            data = data[0]
        return data

    def _context(self, batch, seed, step) -> StepContext:
        if backend.name() != "tensorflow":  # the whole batch, sharded by keras.distribution
            local_batch = ops.shape(batch["token_ids"])[0]
            return StepContext(seed, step, ops.arange(local_batch, dtype="int32"), 1)
        replica = tf.distribute.get_replica_context()
        num_replicas = replica.num_replicas_in_sync if replica is not None else 1
        replica_id = replica.replica_id_in_sync_group if replica is not None else 0
        local_batch = tf.shape(batch["token_ids"])[0]
        example_index = tf.cast(replica_id, tf.int32) * local_batch + tf.range(local_batch)
        loss_scale = 1.0
        if getattr(self, "optimizer", None) is not None:
            loss_scale = tf.cast(self.optimizer.scale_loss(tf.constant(1.0)), tf.float32)
        return StepContext(
            seed=seed,
            step=step,
            example_index=example_index,
            num_replicas=num_replicas,
            loss_scale=loss_scale,
        )

    def train_step(self, *args):
        if backend.name() != "tensorflow":
            return self.portable_train_step(*args)
        (data,) = args
        batch = self._as_batch(data)
        context = self._context(batch, self.config.train.seed, self.optimizer.iterations)
        learning_rate = self.optimizer.learning_rate
        output = self.objective(batch, context, training=True, with_gradients=True)
        # Only variables the objective differentiated are updated (a frozen or unused model
        # gets no step, no moment decay and no weight decay).
        pairs = [(output.gradients.get(id(v)), v) for v in self.trainable_variables]
        pairs = [(g, v) for g, v in pairs if g is not None]
        grads, variables = [g for g, _ in pairs], [v for _, v in pairs]
        if isinstance(self.optimizer, ElectraAdamW):
            # A step with a non-finite loss or gradient norm changes nothing (see the guard).
            finite = self.optimizer.apply(grads, variables, loss=output.loss)
        else:  # loss-scaled (mixed_float16): false at the scale's floor or for bad moments
            finite = self.optimizer.apply(grads, variables)
        finite = tf.constant(True) if finite is None else finite  # another Keras optimizer
        logs = self._update_metrics(output, context.num_replicas)
        logs["learning_rate"] = tf.cast(learning_rate, tf.float32)
        logs["nonfinite"] = 1.0 - tf.cast(finite, tf.float32)
        # This step's loss alone (`loss` is the mean since the last log), for the guard.
        logs["step_loss"] = tf.cast(output.loss, tf.float32) * float(context.num_replicas)
        return logs

    def test_step(self, *args):
        if backend.name() != "tensorflow":
            return self.portable_test_step(*args)
        (data,) = args
        batch = self._as_batch(data)
        step = tf.identity(self._eval_counter.value)
        self._eval_counter.assign_add(1)
        context = self._context(batch, self.config.train.seed + _EVAL_SEED_OFFSET, step)
        output = self.objective(batch, context, training=False, with_gradients=False)
        return self._update_metrics(output, context.num_replicas)

    def fit(
        self,
        x=None,
        y=None,
        *,
        epochs=1,
        steps_per_epoch=None,
        callbacks=None,
        verbose="auto",
        initial_epoch=0,
        **kwargs,
    ):
        """Keras `fit`; under a multi-worker strategy, the same step in `distributed_fit`.

        Keras 3's own `fit` fails under `MultiWorkerMirroredStrategy`
        (keras-team/keras#20585); there, training runs `train_step` in a small
        `strategy.run` loop with the same callbacks. Other arguments
        (validation, class weights) are not available in that mode.
        """
        if backend.name() == "tensorflow":  # tf.distribute: not imported on a JAX or torch machine
            from electra_tf.pretraining.distribute import (
                distributed_fit,
                exact_gradient_sums,
                is_multi_worker,
            )

            exact_gradient_sums()  # a run repeats bit for bit past ~90 steps
        if backend.name() == "tensorflow" and is_multi_worker(self.distribute_strategy):
            callbacks = list(callbacks or []) + self.objective.callbacks()
            if y is not None or any(v is not None for v in kwargs.values()):
                raise ValueError(
                    "Under MultiWorkerMirroredStrategy, ElectraPretrainer.fit takes only x, "
                    "epochs, steps_per_epoch, callbacks, verbose and initial_epoch."
                )
            return distributed_fit(
                self,
                x,
                epochs=epochs,
                steps_per_epoch=steps_per_epoch,
                callbacks=callbacks,
                verbose=1 if verbose == "auto" else verbose,
                initial_epoch=initial_epoch,
            )
        callbacks = list(callbacks or [])
        callbacks += self.objective.callbacks()
        kwargs.setdefault("shuffle", False)  # datasets bring their own order
        return super().fit(
            x,
            y,
            epochs=epochs,
            steps_per_epoch=steps_per_epoch,
            callbacks=callbacks,
            verbose=verbose,
            initial_epoch=initial_epoch,
            **kwargs,
        )

    def evaluate(self, *args, **kwargs):
        """Keras `evaluate`; the masks drawn are the same on every call (counter reset)."""
        self._eval_counter.assign(0)
        return super().evaluate(*args, **kwargs)

    def call(self, inputs, training=None):
        """The discriminator's per-token logits `[B, S]` for uncorrupted `inputs`."""
        return self.discriminator(inputs, training=training)

    # Compile and serialization ---------------------------------------------------------------

    def compile(self, optimizer=None, jit_compile=None, **kwargs):
        """Keras `compile`, defaulting to the config's optimizer.

        Args:
            optimizer: a Keras optimizer; None builds `build_optimizer(config.train)`.
            jit_compile: XLA for the generator and discriminator passes; None or
                "auto" uses `config.train.jit_compile`. The whole step is never
                compiled as one function.
            **kwargs: passed to `keras.Model.compile` (`steps_per_execution`, ...).
        """
        train = self.config.train
        if optimizer is None:
            optimizer = build_optimizer(train, train.mixed_precision)
        xla = train.jit_compile if jit_compile in (None, "auto") else bool(jit_compile)
        self.objective.jit_compile = xla
        self.objective.reset_compiled()
        # JAX runs the whole step as one XLA program (op by op, each op is compiled alone).
        whole_step = backend.name() == "jax"
        super().compile(optimizer=optimizer, jit_compile=whole_step, **kwargs)
        self.optimizer.build(self.trainable_variables)

    def get_compile_config(self):
        return {"jit_compile": bool(self.objective.jit_compile)}

    def compile_from_config(self, config):
        """Re-compiles a loaded model with the config's optimizer (Keras restores its state)."""
        self.compile(jit_compile=config.get("jit_compile", False))

    def get_config(self):
        return {"name": self.name, "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        return cls(config=config["config"], name=config.get("name", "electra_pretrainer"))
