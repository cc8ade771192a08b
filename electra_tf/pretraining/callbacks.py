"""Callbacks of a pre-training run: throughput, TensorBoard scalars by step, checkpoints."""

from __future__ import annotations

import time

import keras
import tensorflow as tf

__all__ = ["Throughput", "StepScalars", "StepCheckpoint", "FlopsBudget"]


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
        if due and step != self.last_saved:
            self.checkpointer.save(step)
            self.last_saved = step

    def on_train_end(self, logs=None):
        step = _step(self.model)
        if step != self.last_saved:
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
