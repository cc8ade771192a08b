"""Callbacks of a pre-training run: throughput, TensorBoard scalars by step, checkpoints,
the FLOP budget, and the guard against non-finite steps."""

from __future__ import annotations

import time

import keras
import tensorflow as tf

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
        self.writer = tf.summary.create_file_writer(str(log_dir)) if enabled else None
        self.last_logs = {}

    def on_train_batch_end(self, batch, logs=None):
        step = _step(self.model)
        if step % self.every:
            return
        self.last_logs = {k: float(v) for k, v in (logs or {}).items()}
        if self.writer is not None:
            with self.writer.as_default(step=step):
                for name, value in self.last_logs.items():
                    tf.summary.scalar(f"train/{name}", value)
            self.writer.flush()
        self.model.reset_metrics()

    def on_train_end(self, logs=None):
        if self.writer is not None:
            self.writer.flush()


class StepCheckpoint(keras.callbacks.Callback):
    """Saves a checkpoint every `every` steps, at the steps in `at`, and at the end of training."""

    def __init__(self, checkpointer, every: int, at=()):
        super().__init__()
        self.checkpointer = checkpointer
        self.every = every
        self.at = set(int(step) for step in at)
        self.last_saved = None

    def on_train_batch_end(self, batch, logs=None):
        step = _step(self.model)
        due = step % self.every == 0 or step in self.at
        if due and step != self.last_saved and not getattr(self.model, "diverged_at", None):
            self.checkpointer.save(step)
            self.last_saved = step

    def on_train_end(self, logs=None):
        # A run stopped by the non-finite guard keeps its last good checkpoint as the newest.
        step = _step(self.model)
        if step != self.last_saved and not getattr(self.model, "diverged_at", None):
            self.checkpointer.save(step)
            self.last_saved = step


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
    """Stops a run whose steps are not finite (their updates were not applied).

    Reads the step's `nonfinite` log (1.0 when the loss or the global gradient norm
    was not finite; `ElectraAdamW` then changed no weight). With `mode="stop"` the
    first such step ends the run; with "skip" the run goes on and stops after
    `max_skips` in a row. Place it before `StepCheckpoint`: a stopped run writes no
    checkpoint of the failed step, so the newest checkpoint is the last good one.

    Attributes:
        skipped: non-finite steps seen (skipped) so far in this run.
        failed_at: the step that stopped the run, or None.
    """

    def __init__(self, mode: str = "stop", max_skips: int = 10):
        super().__init__()
        self.mode = mode
        self.max_skips = max_skips
        self.in_a_row = 0
        self.skipped = 0
        self.failed_at = None

    def on_train_batch_end(self, batch, logs=None):
        if not logs or float(logs.get("nonfinite", 0.0)) == 0.0:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        self.skipped += 1
        logs["nonfinite_skipped"] = self.skipped
        if self.mode == "stop" or self.in_a_row >= self.max_skips:
            self.failed_at = _step(self.model)
            self.model.diverged_at = self.failed_at
            self.model.stop_training = True
