"""The pre-training step on JAX and PyTorch: one loss, one gradient, the same objective.

On TensorFlow, `ElectraPretrainer.train_step` differentiates the generator and the
discriminator passes separately (each under its own tape, so the sampling between
them stays out of XLA). On JAX and PyTorch the objective runs forward only and the
step differentiates its total loss once: since no gradient flows through the
sampling (integer ids, under `stop_gradient`), the gradient of the sum is the sum
of the two passes' gradients, so the update is the same (tests/pretraining/
test_backends.py holds the losses and gradients equal within 1e-5).

- JAX: Keras's stateless step, `train_step(state, data) -> (logs, state)`. The
  objective, the optimizer and the metrics run inside `keras.StatelessScope`, which
  maps every variable to its value in `state` and collects what was assigned
  (dropout's seed states, the optimizer's moments, the metrics' totals). The
  random draws are a pure function of `(seed, step, example)` (`electra_tf.ops.random`),
  so they need no state. Under `keras.distribution.DataParallel` the batch is sharded
  and sums over it are global, so the step is written for the whole batch.
- PyTorch: Keras's pattern for torch, `loss.backward()` then `optimizer.apply`.

Only the variables the objective's passes train (`StepOutput.trained`) are updated, as
on TensorFlow: a model an objective leaves out (BERT MLM's generator, the frozen
generator of two-stage's second stage) gets no step, no moment decay, no weight decay.
"""

from __future__ import annotations

import dataclasses

import keras
from keras import ops

from electra_tf.ops import backend
from electra_tf.pretraining.objectives.base import StepOutput
from electra_tf.pretraining.optimizer import MIN_LOSS_SCALE

__all__ = ["PortableSteps"]

_EVAL_SEED_OFFSET = 0x5EED_E7A1  # evaluation draws come from streams training never uses


def _values_after(scope, variables, before):
    """The values `scope` assigned to `variables`, or their values `before` where none."""
    after = []
    for variable, old in zip(variables, before, strict=True):
        new = scope.get_current_value(variable)
        after.append(old if new is None else new)
    return after


def _trained_only(grads, variables, trained):
    """`grads` with None for each variable not in `trained` (ids of the trained variables)."""
    trained = set(trained)
    return [g if id(v) in trained else None for g, v in zip(grads, variables, strict=True)]


def _present(grads, variables):
    """(gradients, variables) of the pairs whose gradient is not None."""
    pairs = [(g, v) for g, v in zip(grads, variables, strict=True) if g is not None]
    return [g for g, _ in pairs], [v for _, v in pairs]


def _loss_scale(optimizer):
    """The dynamic loss scale (float32) of a loss-scaled optimizer (mixed_float16), else None
    (inside a `StatelessScope` that maps the optimizer's variables)."""
    if not isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        return None
    return ops.cast(ops.convert_to_tensor(optimizer.dynamic_scale), "float32")


def _positions(variables, wanted):
    """The positions in `variables` of each of `wanted` (by identity: a Keras variable's
    `==` compares values)."""
    where = {id(variable): index for index, variable in enumerate(variables)}
    return [where[id(variable)] for variable in wanted]


def _finite_verdict(loss, grads):
    """Whether the step's loss and global gradient norm are finite (float32 1.0 or 0.0)."""
    squares = [ops.sum(ops.square(ops.cast(g, "float32"))) for g in grads if g is not None]
    norm = ops.sqrt(sum(squares[1:], squares[0])) if squares else ops.convert_to_tensor(0.0)
    finite = ops.logical_and(ops.isfinite(norm), ops.isfinite(ops.cast(loss, "float32")))
    return ops.cast(finite, "float32")


def _next_scale(scale, counter, applied, growth_steps: int):
    """Dynamic loss scaling's (scale, counter) after a step, TensorFlow's rule: an applied
    step counts, and the `growth_steps`-th in a row doubles the scale; a skipped one halves
    it, down to `MIN_LOSS_SCALE`, and restarts the count."""
    grow = ops.logical_and(applied, ops.equal(counter, growth_steps - 1))
    scale = ops.where(
        applied, ops.where(grow, scale * 2.0, scale), ops.maximum(scale * 0.5, MIN_LOSS_SCALE)
    )
    counter = ops.where(
        ops.logical_and(applied, ops.logical_not(grow)), counter + 1, ops.zeros_like(counter)
    )
    return scale, counter


def _scaled_verdict(scale, applied, moments):
    """A loss-scaled step's verdict (float32 1.0 or 0.0), as on TensorFlow: false for a skip
    with the scale (`scale`, before the step) already at its floor, or a non-finite moment."""
    finite = [ops.all(ops.isfinite(m)) for m in moments]
    moments_finite = ops.all(ops.stack(finite)) if finite else ops.convert_to_tensor(True)
    at_floor = ops.less_equal(scale, MIN_LOSS_SCALE)
    verdict = ops.logical_and(moments_finite, ops.logical_or(applied, ops.logical_not(at_floor)))
    return ops.cast(verdict, "float32")


class PortableSteps:
    """`ElectraPretrainer`'s train and test steps for the JAX and PyTorch backends."""

    def _check_portable(self):
        if not getattr(self.objective, "portable", False):
            raise ValueError(
                f"objective {self.objective.name!r} trains on the TensorFlow backend only."
            )

    def _step_logs(self, output, learning_rate, finite):
        logs = self._update_metrics(output, 1)
        logs["learning_rate"] = ops.cast(learning_rate, "float32")
        logs["nonfinite"] = 1.0 - ops.cast(finite, "float32")
        logs["step_loss"] = ops.cast(output.loss, "float32")
        return logs

    # Training ----------------------------------------------------------------------------------

    def portable_train_step(self, *args):
        """Keras's JAX (`state, data`) or PyTorch (`data`) train step for this backend."""
        self._check_portable()
        if backend.name() == "jax":
            return self._jax_train_step(*args)
        return self._torch_train_step(*args)

    def _jax_loss_and_gradients(self, trainable, non_trainable, optimizer_values, batch, training):
        """(loss, `StepOutput`'s fields as a dict, gradients of `trainable` (None where the
        objective trains a variable not), updated non-trainable values) on JAX: pytrees, so
        that it can be jitted.

        The objective runs inside a `StatelessScope` mapping the model's and the
        optimizer's variables to the given values (the step counter among them).
        """
        import jax

        trained = []  # filled while tracing: which variables the objective's passes train

        def loss_and_updates(trainable_values):
            mapping = [
                *zip(self.trainable_variables, trainable_values, strict=True),
                *zip(self.non_trainable_variables, non_trainable, strict=True),
                *zip(self.optimizer.variables, optimizer_values, strict=True),
            ]
            with keras.StatelessScope(state_mapping=mapping) as scope:
                step = ops.convert_to_tensor(self.optimizer.iterations)
                context = self._context(batch, self.config.train.seed, step)
                output = self.objective(batch, context, training=training, with_gradients=False)
                scale = _loss_scale(self.optimizer)
            updated = _values_after(scope, self.non_trainable_variables, non_trainable)
            # JAX carries pytrees out of a transformation: the output's fields, not the object.
            fields = dataclasses.asdict(output)
            trained.extend(fields.pop("trained"))
            loss = output.loss if scale is None else ops.cast(output.loss, "float32") * scale
            return loss, (fields, updated)

        grad_fn = jax.value_and_grad(loss_and_updates, has_aux=True)
        (loss, (fields, non_trainable)), grads = grad_fn(trainable)
        grads = _trained_only(grads, self.trainable_variables, trained)
        return loss, fields, grads, non_trainable

    def _jax_apply(self, optimizer_values, grads, trainable, optimizer=None):
        """`optimizer.stateless_apply` for the variables with a gradient only: the others
        keep their values and their optimizer slots. `optimizer`: the model's, or the one a
        loss-scaled optimizer wraps (its variables are among the model's optimizer's).

        Returns:
            (trainable values, optimizer values) after the update.
        """
        mapping = [
            *zip(self.trainable_variables, trainable, strict=True),
            *zip(self.optimizer.variables, optimizer_values, strict=True),
        ]
        with keras.StatelessScope(state_mapping=mapping) as scope:
            (optimizer or self.optimizer).apply(*_present(grads, self.trainable_variables))
        trainable = _values_after(scope, self.trainable_variables, trainable)
        return trainable, _values_after(scope, self.optimizer.variables, optimizer_values)

    def _jax_train_step(self, state, data):
        trainable, non_trainable, optimizer_values, metric_values = state
        loss, fields, grads, non_trainable = self._jax_loss_and_gradients(
            trainable, non_trainable, optimizer_values, self._as_batch(data), training=True
        )
        output = StepOutput(**fields)
        finite = _finite_verdict(loss, grads)
        mapping = list(zip(self.optimizer.variables, optimizer_values, strict=True))
        with keras.StatelessScope(state_mapping=mapping):
            learning_rate = ops.convert_to_tensor(self.optimizer.learning_rate)
        if not isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            trainable, optimizer_values = self._jax_apply(optimizer_values, grads, trainable)
        else:
            trainable, optimizer_values, finite = self._jax_scaled_apply(
                optimizer_values, grads, trainable, finite
            )
        mapping = list(zip(self.metrics_variables, metric_values, strict=True))
        with keras.StatelessScope(state_mapping=mapping) as scope:
            logs = self._step_logs(output, learning_rate, finite)
        metric_values = _values_after(scope, self.metrics_variables, metric_values)
        return logs, (trainable, non_trainable, optimizer_values, metric_values)

    def _jax_scaled_apply(self, optimizer_values, grads, trainable, finite):
        """mixed_float16 on JAX: TensorFlow's dynamic loss scaling (Keras's
        `LossScaleOptimizer`, as `_ReplicaSafeLossScaleOptimizer` sets it), stateless.

        The gradients (of the loss times the scale) are unscaled and applied when they are
        all finite; otherwise the step is skipped (weights, moments and the step counter
        keep their values) and the scale halves, down to `MIN_LOSS_SCALE`. After
        `dynamic_growth_steps` finite steps in a row the scale doubles.

        Returns:
            (trainable values, optimizer values, verdict): the verdict (1.0 or 0.0) is
            false, as on TensorFlow, for a skip with the scale already at its floor or for
            a non-finite moment.
        """
        optimizer = self.optimizer
        own = _positions(optimizer.variables, [optimizer.dynamic_scale])[0]
        counter_at = _positions(optimizer.variables, [optimizer.step_counter])[0]
        inner = optimizer.inner_optimizer
        moment_at = _positions(
            optimizer.variables,
            [*getattr(inner, "_momentums", []), *getattr(inner, "_velocities", [])],
        )
        scale, counter = optimizer_values[own], optimizer_values[counter_at]
        unscaled = [None if g is None else g / ops.cast(scale, g.dtype) for g in grads]
        applied = ops.cast(finite, "bool")
        new_trainable, new_values = self._jax_apply(optimizer_values, unscaled, trainable, inner)
        pairs = zip(new_trainable, trainable, strict=True)
        trainable = [ops.where(applied, n, o) for n, o in pairs]
        pairs = zip(new_values, optimizer_values, strict=True)
        new_values = [ops.where(applied, n, o) for n, o in pairs]
        new_values[own], new_values[counter_at] = _next_scale(
            scale, counter, applied, optimizer.dynamic_growth_steps
        )
        verdict = _scaled_verdict(scale, applied, [new_values[i] for i in moment_at])
        return trainable, new_values, verdict

    def _torch_loss_and_gradients(self, batch, training):
        """(`StepOutput`, gradients of the trainable variables, None where the objective
        trains a variable not) on PyTorch; under mixed_float16 the gradients of the loss
        times the loss scale."""
        self.zero_grad()
        step = ops.convert_to_tensor(self.optimizer.iterations)
        context = self._context(batch, self.config.train.seed, step)
        output = self.objective(batch, context, training=training, with_gradients=False)
        scale = _loss_scale(self.optimizer)
        loss = output.loss if scale is None else ops.cast(output.loss, "float32") * scale
        loss.backward()
        variables = self.trainable_variables
        grads = [v.value.grad for v in variables]
        return output, _trained_only(grads, variables, output.trained)

    def loss_and_gradients(self, batch, training=False):
        """The objective's total loss, its `StepOutput` and the gradients of the trainable
        variables (in `trainable_variables` order; zeros where a variable gets none), on
        this backend, at the optimizer's current step, without applying them.

        For tests and checks across backends: TensorFlow differentiates the objective's
        passes (its step), JAX and PyTorch the total loss (theirs).
        """
        name = backend.name()
        variables = self.trainable_variables
        if name == "jax":
            import jax

            compiled = jax.jit(self._jax_loss_and_gradients, static_argnames="training")
            loss, fields, grads, _ = compiled(
                [v.value for v in variables],
                [v.value for v in self.non_trainable_variables],
                [v.value for v in self.optimizer.variables],
                batch,
                training=training,
            )
            output = StepOutput(**fields)
        elif name == "torch":
            output, grads = self._torch_loss_and_gradients(batch, training)
        else:
            step = self.optimizer.iterations
            context = self._context(batch, self.config.train.seed, step)
            output = self.objective(batch, context, training=training, with_gradients=True)
            grads = [output.gradients.get(id(v)) for v in variables]
        pairs = zip(grads, variables, strict=True)
        grads = [ops.zeros(v.shape, v.dtype) if g is None else g for g, v in pairs]
        return output.loss, output, grads

    def _torch_train_step(self, data):
        import torch

        learning_rate = ops.convert_to_tensor(self.optimizer.learning_rate)
        output, grads = self._torch_loss_and_gradients(self._as_batch(data), training=True)
        finite = _finite_verdict(output.loss, grads)
        with torch.no_grad():
            if isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
                finite = self._torch_scaled_apply(grads, finite)
            else:
                self.optimizer.apply(*_present(grads, self.trainable_variables))
        return self._step_logs(output, learning_rate, finite)

    def _torch_scaled_apply(self, grads, finite):
        """mixed_float16 on PyTorch: `_jax_scaled_apply`'s dynamic loss scaling, in place.

        Finite gradients are unscaled and applied by the inner optimizer, and the scale
        doubles after `dynamic_growth_steps` such steps in a row; otherwise nothing is
        applied (weights, moments and the step counter keep their values) and the scale
        halves, down to `MIN_LOSS_SCALE`.

        Returns:
            The step's verdict (1.0 or 0.0), as on TensorFlow: false for a skip with the
            scale already at its floor, or for a non-finite moment.
        """
        optimizer = self.optimizer
        inner = optimizer.inner_optimizer
        scale = ops.convert_to_tensor(optimizer.dynamic_scale)
        counter = ops.convert_to_tensor(optimizer.step_counter)
        applied = ops.cast(finite, "bool")
        if bool(ops.convert_to_numpy(applied)):  # eager: a skipped step touches nothing
            unscaled = [None if g is None else g / ops.cast(scale, g.dtype) for g in grads]
            inner.apply(*_present(unscaled, self.trainable_variables))
        next_scale, next_counter = _next_scale(
            scale, counter, applied, optimizer.dynamic_growth_steps
        )
        optimizer.dynamic_scale.assign(next_scale)
        optimizer.step_counter.assign(next_counter)
        moments = [*getattr(inner, "_momentums", []), *getattr(inner, "_velocities", [])]
        return _scaled_verdict(scale, applied, [m.value for m in moments])

    # Evaluation --------------------------------------------------------------------------------

    def portable_test_step(self, *args):
        """Keras's JAX (`state, data`) or PyTorch (`data`) test step for this backend."""
        self._check_portable()
        if backend.name() == "jax":
            return self._jax_test_step(*args)
        batch = self._as_batch(args[0])
        output = self._evaluation_output(batch)
        return self._update_metrics(output, 1)

    def _evaluation_output(self, batch):
        step = ops.convert_to_tensor(self._eval_counter)
        self._eval_counter.assign(step + 1)
        context = self._context(batch, self.config.train.seed + _EVAL_SEED_OFFSET, step)
        return self.objective(batch, context, training=False, with_gradients=False)

    def _jax_test_step(self, state, data):
        trainable, non_trainable, metric_values = state
        mapping = [
            *zip(self.trainable_variables, trainable, strict=True),
            *zip(self.non_trainable_variables, non_trainable, strict=True),
            *zip(self.metrics_variables, metric_values, strict=True),
        ]
        with keras.StatelessScope(state_mapping=mapping) as scope:
            output = self._evaluation_output(self._as_batch(data))
            logs = self._update_metrics(output, 1)
        non_trainable = _values_after(scope, self.non_trainable_variables, non_trainable)
        metric_values = _values_after(scope, self.metrics_variables, metric_values)
        return logs, (trainable, non_trainable, metric_values)
