"""Callbacks of a pre-training run: throughput, TensorBoard scalars by step, checkpoints,
the FLOP budget, and the guard that judges each step's health."""

from __future__ import annotations

import math
import sys
import time

import keras
import numpy as np
import tensorflow as tf

from electra_tf.pretraining.portable_checkpoint import put_back_rng_states

__all__ = ["Throughput", "StepScalars", "StepCheckpoint", "FlopsBudget", "NonfiniteGuard"]


def _step(model) -> int:
    return int(model.optimizer.iterations.numpy())


class Throughput(keras.callbacks.Callback):
    """Adds `tokens_per_s` (sequence positions, padding included) to the batch logs.

    Place it before the progress bar (user callbacks run first), so the bar
    shows it. The figure is the mean over the last `window` steps.
    """

    def __init__(self, tokens_per_step: int, window: int = 20):
        super().__init__()
        self.tokens_per_step = tokens_per_step
        self.window = window
        self._times = []
        self._start = None

    def on_train_batch_begin(self, batch, logs=None):
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if self._start is None or logs is None:
            return
        self._times = (self._times + [time.perf_counter() - self._start])[-self.window :]
        logs["tokens_per_s"] = self.tokens_per_step * len(self._times) / sum(self._times)


class StepScalars(keras.callbacks.Callback):
    """Writes every logged metric to TensorBoard every `every` steps, keyed by optimizer step.

    After writing, the model's metrics are reset, so logs (and the progress
    bar) show means over the last window rather than over the whole run.
    Keyed by the optimizer step, the curves continue where they were after a resume.
    """

    def __init__(self, log_dir, every: int, enabled: bool = True):
        super().__init__()
        self.every = every
        self.enabled = enabled
        self.log_dir = str(log_dir)
        self.writer = tf.summary.create_file_writer(self.log_dir) if enabled else None
        self.last_logs = {}

    def _write(self, step) -> None:
        try:
            with self.writer.as_default(step=step):
                for name, value in self.last_logs.items():
                    tf.summary.scalar(f"train/{name}", value)
            self.writer.flush()
        except tf.errors.OpError as error:  # a full disk: training and checkpoints go on
            self.writer = None
            reason = error.message.splitlines()[0][:160]
            print(
                f"[logs] Stopped writing TensorBoard scalars to {self.log_dir} ({reason}).",
                file=sys.stderr,
                flush=True,
            )

    def on_train_batch_end(self, batch, logs=None):
        step = _step(self.model)
        if step % self.every:
            return
        self.last_logs = {k: float(v) for k, v in (logs or {}).items()}
        if self.writer is not None:
            self._write(step)
        self.model.reset_metrics()

    def on_train_end(self, logs=None):
        if self.writer is not None:
            try:
                self.writer.flush()
            except tf.errors.OpError:
                self.writer = None


class StepCheckpoint(keras.callbacks.Callback):
    """Saves a checkpoint every `every` steps, at the steps in `at`, and at the end of training.

    Each records the batches the run has read (`read` before this `fit`), its data's
    position: a skipped step (a loss scale calibrating) reads a batch and leaves the step
    counter, so the end of training saves whenever a batch was read since the last save,
    at the same step or not. With a `guard` (`NonfiniteGuard`), a checkpoint written while
    the run is in trouble is saved as suspect (see `Checkpointer.save`).
    """

    def __init__(self, checkpointer, every: int, at=(), guard=None, read: int = 0):
        super().__init__()
        self.checkpointer = checkpointer
        self.every = every
        self.at = set(int(step) for step in at)
        self.guard = guard
        self.last_saved = None
        self.read = self.read_when_saved = read

    def _save(self, step) -> None:
        suspect = self.guard.trouble if self.guard is not None else None
        self.checkpointer.save(step, extra={"batches": self.read}, suspect=suspect)
        self.last_saved, self.read_when_saved = step, self.read

    def on_train_batch_begin(self, batch, logs=None):
        # On PyTorch, a resumed run's dropout generator as the checkpoint left it, once
        # `fit` has drawn its data loader's seed from it (`portable_checkpoint`).
        states, self.checkpointer.rng_states = self.checkpointer.rng_states, None
        if states:
            put_back_rng_states(states)

    def on_train_batch_end(self, batch, logs=None):
        self.read += 1
        step = _step(self.model)
        due = step % self.every == 0 or step in self.at
        if due and step != self.last_saved and not getattr(self.model, "diverged_at", None):
            self._save(step)

    def on_train_end(self, logs=None):
        # A run stopped by the guard writes nothing more: its failed step is never saved.
        if self.read != self.read_when_saved and not getattr(self.model, "diverged_at", None):
            self._save(_step(self.model))


class FlopsBudget(keras.callbacks.Callback):
    """Adds cumulative training FLOPs to the logs and stops once `budget` is spent."""

    def __init__(self, flops_per_step: float, budget: float = 0.0):
        super().__init__()
        self.flops_per_step = flops_per_step
        self.budget = budget

    def on_train_batch_end(self, batch, logs=None):
        spent = _step(self.model) * self.flops_per_step
        if logs is not None:
            logs["train_flops"] = spent
        if self.budget and spent >= self.budget:
            self.model.stop_training = True


class NonfiniteGuard(keras.callbacks.Callback):
    """Judges each step's health; stops a run whose steps are not finite.

    A step is unhealthy when it was skipped (its `nonfinite` log is 1: the loss or the
    global gradient norm was not finite and `ElectraAdamW` changed nothing; under
    mixed_float16, a skip with the loss scale at its floor, or a non-finite moment), or
    when its loss (`step_loss`) is more than `spike` times the largest of the last
    `window` finite step losses. The first unhealthy step opens a spell of trouble
    (`trouble`, its reason) that ends after `window` healthy steps in a row; a
    checkpoint written during it is suspect. Each step's verdict also judges the
    checkpoint written just before it, whose weights it ran on (`Checkpointer.judge`).
    With `mode="stop"` the first skipped step ends the run; with "skip" the run stops
    after `max_skips` skipped in a row. A single loss out of range never stops it.

    A slow divergence never jumps: the loss climbs a little each step, or jumps once and
    stays high. So the run also stops when the median of its last `window` finite losses
    (judged once `window // 4` are in) is more than `drift` times the lowest such median
    of the run (0: off); the checkpointer then trusts no checkpoint newer than that
    lowest point (`Checkpointer.distrust_after`). Place the guard before
    `StepCheckpoint`: a stopped run writes no checkpoint of the failed step.

    Attributes:
        skipped: non-finite steps seen (skipped) so far in this run.
        failed_at: the step that stopped the run, or None.
        trouble: why the run is in trouble now (a phrase), or None.
        first_sign: the run's first unhealthy step's reason, or None.
        drifted: why the loss's median says the run diverged (a phrase), or None.
        lowest: (median loss, step) at the run's lowest median so far, or None.
    """

    def __init__(
        self, mode="stop", max_skips=10, checkpointer=None, window=20, spike=2.0, drift=4.0
    ):
        super().__init__()
        self.mode = mode
        self.max_skips = max_skips
        self.checkpointer = checkpointer
        self.window = window
        self.spike = spike
        self.drift = drift
        self.lowest = None
        self.drifted = None
        self.recent = []  # the last `window` finite step losses
        self.healthy_in_a_row = 0
        self.in_a_row = 0
        self.skipped = 0
        self.failed_at = None
        self.trouble = None
        self.first_sign = None

    def _verdict(self, step, skipped, loss) -> str | None:
        if skipped:
            return f"step {step} was skipped for a loss or gradient that was not finite"
        if loss is None or not math.isfinite(loss):
            return None
        limit = self.spike * max(self.recent) if self.recent else math.inf
        self.recent = (self.recent + [loss])[-self.window :]
        median = float(np.median(self.recent))
        if self.lowest is None or median < self.lowest[0]:
            self.lowest = (median, step)
            if self.checkpointer is not None:
                self.checkpointer.lowest_loss_at(step)
        elif self.drift and len(self.recent) >= max(1, self.window // 4):
            if median > self.drift * self.lowest[0] > 0:
                self.drifted = (
                    f"the median of its last {len(self.recent)} losses rose to {median:.4g}, "
                    f"over {self.drift:g} times its lowest ({self.lowest[0]:.4g} at step "
                    f"{self.lowest[1]})"
                )
                return self.drifted
        if loss > limit > 0:
            return (
                f"step {step}'s loss jumped to {loss:.4g}, over {self.spike:g} times its recent "
                f"maximum ({limit / self.spike:.4g})"
            )
        return None

    def on_train_batch_end(self, batch, logs=None):
        logs = logs if logs is not None else {}
        step = _step(self.model)
        skipped = float(logs.get("nonfinite", 0.0)) != 0.0
        loss = logs.get("step_loss")
        reason = self._verdict(step, skipped, None if loss is None else float(loss))
        if self.checkpointer is not None:
            self.checkpointer.judge(reason is None, reason)
        if reason is None:
            self.healthy_in_a_row += 1
            if self.healthy_in_a_row >= self.window:
                self.trouble = None
        else:
            self.healthy_in_a_row = 0
            self.trouble = self.trouble or reason
            self.first_sign = self.first_sign or reason
        if self.drifted and self.failed_at is None:
            if self.checkpointer is not None:
                self.checkpointer.distrust_after(self.lowest[1], f"written after {self.drifted}")
            self.failed_at = step
            self.model.diverged_at = step
            self.model.stop_training = True
        if not skipped:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        self.skipped += 1
        logs["nonfinite_skipped"] = self.skipped
        if self.mode == "stop" or self.in_a_row >= self.max_skips:
            self.failed_at = step
            self.model.diverged_at = self.failed_at
            self.model.stop_training = True


class StepWatch(keras.callbacks.Callback):
    """Keeps a multi-worker run's `worker_watch.Watch` told of the last finished step and
    of how to name the last checkpoint (`checkpoint`: a callable, the name or None)."""

    def __init__(self, watch, checkpoint):
        super().__init__()
        self.watch = watch
        watch.checkpoint = checkpoint

    def on_train_begin(self, logs=None):
        self.watch.step = _step(self.model)

    def on_train_batch_end(self, batch, logs=None):
        self.watch.step = _step(self.model)
