"""One pre-training run: strategy, data, model, resume, `fit`, checkpoints, TensorBoard.

`run_pretraining(config, output_dir)` is what `electra-tf pretrain` calls.
The run folder holds `config.json`, `checkpoints/step-N/` and `logs/`
(TensorBoard). Re-running with the same folder resumes from the latest
checkpoint: same step, same schedule position, same data position, and the
same weights as an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import keras
import tensorflow as tf

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.data.pipeline import pretraining_dataset
from electra_tf.data.tfrecords import check_first_record, count_records, resolve_files
from electra_tf.io.durable import os_reason, probe_writable, write_atomic
from electra_tf.pretraining import worker_watch
from electra_tf.pretraining.callbacks import (
    FlopsBudget,
    NonfiniteGuard,
    StepCheckpoint,
    StepScalars,
    StepWatch,
    Throughput,
)
from electra_tf.pretraining.checkpoint import Checkpointer
from electra_tf.pretraining.checkpoint_checks import READ_ERRORS, batches_read
from electra_tf.pretraining.distribute import make_strategy, worker_info
from electra_tf.pretraining.objectives import train_flops_per_step
from electra_tf.pretraining.portable_checkpoint import readable_here
from electra_tf.pretraining.portable_run import check_backend, set_distribution, worker
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.run_config import (
    check_resume_config,
    config_for_data,
    config_for_vocabulary,
    with_absolute_paths,
)
from electra_tf.pretraining.warm_start import apply_warm_start
from electra_tf.runtime import op_stacks

__all__ = [
    "RunResult",
    "TrainingDiverged",
    "WorkerLost",
    "run_pretraining",
    "config_for_data",
    "config_for_vocabulary",
    "check_resume_config",
]


@dataclasses.dataclass
class RunResult:
    """What a finished run leaves: the model, its last step, logs and folders."""

    model: ElectraPretrainer
    step: int
    logs: dict
    output_dir: Path
    checkpoint: Path | None
    seconds: float
    resumed_from: int


class TrainingDiverged(RuntimeError):
    """A run stopped by the non-finite guard; the message says where and what to try."""


class WorkerLost(RuntimeError):
    """A multi-worker run whose collectives failed because a worker stopped answering."""


# What a collective raises when a peer is gone (heartbeats stopped, connection reset, or
# train.collective_timeout passed).
_WORKER_ERRORS = (
    tf.errors.UnavailableError,
    tf.errors.DeadlineExceededError,
    tf.errors.AbortedError,
    tf.errors.CancelledError,
)


def _json_safe(values: dict) -> dict:
    """`values` with non-finite floats as null (JSON has no NaN)."""
    return {
        k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in values.items()
    }


def run_pretraining(
    config: ElectraConfig,
    output_dir,
    *,
    verbose: int | str = "auto",
    resume: bool = True,
    callbacks=(),
    max_steps: int | None = None,
    save_steps=(),
    text_sources=None,
    lower_case: bool | None = None,
    warm_start=None,
) -> RunResult:
    """Trains `config` into `output_dir`, resuming from its latest checkpoint if any.

    Args:
        config: the run's config; `data.train_files` names the packed examples.
        output_dir, verbose, callbacks: the run folder, Keras's verbosity and callbacks.
        resume: False refuses to start over a folder with checkpoints.
        max_steps: stop after this many steps in this call (the run can be resumed).
        save_steps: steps to checkpoint besides every `train.checkpoint_every`.
        text_sources: corpus sources to stream from instead of prepared files, packed on
            the fly (`electra_tf.data.streaming`; default or mirrored strategy only).
        lower_case: lower-case (and strip accents) when streaming; None: `data.lower_case`.
        warm_start: a `WarmStart` a new run starts from (`config_for_warm_start`).

    Returns:
        `RunResult`. Raises `ConfigError` in one sentence, before writing anything, when
        the output folder cannot be written, and `TrainingDiverged` when the guard stops it.
    """
    started, output_dir, train = time.perf_counter(), Path(output_dir), config.train
    check_backend(config)
    config = with_absolute_paths(config)
    strategy, (is_chief, worker_id) = _strategy(train)
    inputs = _training_files(config, text_sources)
    model, checkpointer = _build(config, strategy, output_dir, is_chief, worker_id)
    resumed = _resume(checkpointer, config, output_dir, resume)
    if resumed is None and warm_start is not None:
        apply_warm_start(model, warm_start)
    start, read = resumed or (0, 0)  # the step, and the batches read (the data's position)
    if is_chief:
        _write_output(output_dir / "config.json", config.to_json() + "\n")
    steps = _steps_to_run(config, read, max_steps)
    dataset = _dataset(config, strategy, inputs, read, text_sources, lower_case)
    scalars, guard, run_callbacks = _callbacks(config, output_dir, checkpointer, save_steps, read)
    run_callbacks += list(callbacks)  # the user's run after ours
    verbose = verbose if is_chief else 0  # one progress bar: the chief's
    logs = _fit(model, dataset, steps, run_callbacks, verbose, checkpointer) if steps else {}
    step = int(model.optimizer.iterations.numpy())
    if is_chief:
        _write_summary(output_dir, step, start, guard, logs, scalars.last_logs)
    if guard.failed_at:
        raise _diverged(guard, checkpointer, train)
    if guard.trouble and is_chief:
        good = f"step-{checkpointer.good:08d}" if checkpointer.good is not None else "none"
        print(
            f"Note: the run ended in trouble ({guard.trouble}): its last checkpoint is marked "
            f"suspect, export refuses it without --allow-suspect, and the last good one is "
            f"{good}.",
            file=sys.stderr,
        )
    return RunResult(
        model=model,
        step=step,
        logs=scalars.last_logs or logs,
        output_dir=output_dir,
        checkpoint=checkpointer.latest(),
        seconds=time.perf_counter() - started,
        resumed_from=start,
    )


def _callbacks(config, output_dir: Path, checkpointer: Checkpointer, save_steps, read: int):
    """(scalars, guard, the run's callbacks in order): the guard judges a step before
    any checkpoint of it, so a failed step is never saved. `read`: batches read before."""
    train = config.train
    scalars = _step_scalars(output_dir, train, checkpointer.is_chief)
    guard = NonfiniteGuard(
        train.on_nonfinite, train.max_nonfinite_skips, checkpointer, drift=train.divergence_factor
    )
    return (
        scalars,
        guard,
        [
            Throughput(train.batch_size * config.data.sequence_length),
            FlopsBudget(train_flops_per_step(config), train.flops_budget),
            guard,
            scalars,
            StepCheckpoint(checkpointer, train.checkpoint_every, save_steps, guard, read),
        ],
    )


def _strategy(train):
    """(strategy, (is_chief, worker id)): the `tf.distribute` strategy on TensorFlow.
    Elsewhere, Keras's distribution (set here) places the variables and splits the batch,
    and TensorFlow's default strategy, whose scope changes nothing, stands in."""
    if keras.config.backend() == "tensorflow":
        return make_strategy(train), worker_info()
    set_distribution(train)
    return tf.distribute.get_strategy(), worker(train)


def _build(config, strategy, output_dir: Path, is_chief: bool, worker_id: int):
    """The compiled pretrainer, built in the strategy's scope, and its checkpointer, once
    the chief has checked that it can write the run folder."""
    if is_chief:
        _check_output(output_dir)
    keras.utils.set_random_seed(config.train.seed)
    with strategy.scope():
        model = ElectraPretrainer(config)
        model.compile()
    checkpointer = Checkpointer(
        output_dir / "checkpoints",
        model,
        keep=config.train.keep_checkpoints,
        is_chief=is_chief,
        worker_id=worker_id,
    )
    return model, checkpointer


def _write_summary(output_dir: Path, step, start, guard, logs, window_logs) -> None:
    summary = {
        "step": step,
        "resumed_from": start,
        "status": "diverged" if guard.failed_at else "finished",
        "nonfinite_steps_skipped": guard.skipped,
        "logs": _json_safe(logs),
        "window_logs": _json_safe(window_logs),
    }
    _write_output(output_dir / "last_run.json", json.dumps(summary, indent=2) + "\n")


def _training_files(config: ElectraConfig, text_sources):
    """(files, per-file counts) of prepared data, checked; None when streaming text."""
    if text_sources is not None:
        if config.train.strategy not in ("default", "mirrored"):
            raise ConfigError(
                "Streaming from text runs one input pipeline; train.strategy="
                f"{config.train.strategy!r} needs prepared data (electra-tf prepare)."
            )
        if not config.data.vocab_file:
            raise ConfigError("Streaming from text needs data.vocab_file (--vocab-file).")
        return None
    files, counts, _ = resolve_files(config.data.train_files)
    check_first_record(files, config.data.sequence_length)
    return files, counts if counts is not None else count_records(files)


def _output_error(folder, error) -> ConfigError:
    return ConfigError(
        f"Could not write into {folder} ({os_reason(error)}); free space or choose a "
        "writable --output-dir."
    )


def _check_output(output_dir: Path) -> None:
    """Fails in one sentence, writing nothing, when the run folder cannot be written."""
    try:
        probe_writable(output_dir)
    except OSError as error:
        raise _output_error(output_dir, error) from None


def _write_output(path: Path, text: str) -> None:
    """Writes one of the run folder's files durably (synced, renamed into place)."""
    try:
        write_atomic(path, text)
    except OSError as error:
        raise _output_error(path.parent, error) from None


def _step_scalars(output_dir: Path, train, is_chief: bool) -> StepScalars:
    try:
        return StepScalars(output_dir / "logs", every=train.log_every, enabled=is_chief)
    except tf.errors.OpError as error:
        raise _output_error(output_dir / "logs", error) from None


def _resume(checkpointer: Checkpointer, config, output_dir, resume: bool):
    """Restores the newest checkpoint that verifies and reads: (its step, batches read), or None."""
    while (latest := checkpointer.latest()) is not None:
        if not resume:
            raise ConfigError(
                f"{output_dir} already holds checkpoints (latest {latest.name}); resume it "
                "or choose a new --output-dir."
            )
        saved = ElectraConfig.from_json((latest / "config.json").read_text(), str(latest))
        check_resume_config(saved, config, latest)
        readable_here(latest, keras.config.backend())  # another backend's: refused, kept
        try:
            return checkpointer.restore(latest), batches_read(latest)
        except READ_ERRORS as error:
            # It verified but does not read (say, it does not fit this program): set it aside.
            reason = getattr(error, "message", str(error)).splitlines()[0][:200]
            checkpointer.move_aside(latest, f"reading it failed: {reason}")
            if not checkpointer.is_chief:
                raise
    return None


def _steps_to_run(config: ElectraConfig, read: int, max_steps: int | None) -> int:
    """Batches left: `train.num_steps` (or the budget's) counts batches, skipped steps too."""
    total = config.train.num_steps
    if config.train.flops_budget:
        per_step = train_flops_per_step(config)
        total = min(total, int(-(-config.train.flops_budget // per_step)))
    steps = max(0, total - read)
    return steps if max_steps is None else min(steps, max_steps)


def _dataset(config, strategy, inputs, start: int, text_sources, lower_case):
    """The run's input stream from `start`: prepared files, or text packed on the fly."""
    train = config.train
    if text_sources is not None:
        from electra_tf.data.streaming import text_dataset
        from electra_tf.data.tokenizer import ElectraTokenizer

        lower = config.data.lower_case if lower_case is None else lower_case
        dataset = text_dataset(
            text_sources,
            ElectraTokenizer(config.data.vocab_file, lower_case=lower),
            sequence_length=config.data.sequence_length,
            batch_size=train.batch_size,
            seed=train.seed,
            start_step=start,
        )
        if _distributed(train):
            dataset = strategy.experimental_distribute_dataset(dataset)
        return dataset
    files, counts = inputs

    def dataset_fn(input_context=None):
        return pretraining_dataset(
            files,
            counts,
            sequence_length=config.data.sequence_length,
            batch_size=train.batch_size,
            seed=train.seed,
            shuffle_block=config.data.shuffle_block,
            start_step=start,
            input_context=input_context,
        )

    if not _distributed(train):  # Keras's JAX trainer splits the global batch itself
        return dataset_fn()
    return strategy.distribute_datasets_from_function(dataset_fn)


def _distributed(train) -> bool:
    """Whether the input goes through `tf.distribute` (a strategy on TensorFlow)."""
    return train.strategy != "default" and keras.config.backend() == "tensorflow"


def _fit(model, dataset, steps: int, callbacks, verbose, checkpointer) -> dict:
    """`model.fit` for `steps`; a lost multi-worker peer becomes `WorkerLost` (on JAX, the
    process's `worker_watch` says so and ends it)."""
    train, watch = model.config.train, worker_watch.current()
    if watch is not None:
        callbacks = [*callbacks, StepWatch(watch, lambda: _latest_name(checkpointer))]
    try:
        with worker_watch.training(watch), op_stacks.fixed():
            history = model.fit(
                dataset, epochs=1, steps_per_epoch=steps, callbacks=callbacks, verbose=verbose
            )
    except _WORKER_ERRORS as error:
        if train.strategy != "multi_worker":
            raise
        reason = error.message.splitlines()[0].split("}} ")[-1][:160]
        raise WorkerLost(
            worker_watch.lost_sentence(
                int(model.optimizer.iterations.numpy()),
                f"{type(error).__name__}: {reason}",
                _latest_name(checkpointer),
            )
        ) from None
    return {name: float(values[-1]) for name, values in history.history.items()}


def _latest_name(checkpointer: Checkpointer) -> str | None:
    """The name of the run's last checkpoint, as the chief sees it; None elsewhere."""
    latest = checkpointer.latest() if checkpointer.is_chief else None
    return latest.name if latest else None


def _diverged(guard: NonfiniteGuard, checkpointer: Checkpointer, train) -> TrainingDiverged:
    """The one sentence of a run the guard stopped, after its unhealthy checkpoints are
    moved aside (so the newest checkpoint left is the last good one)."""
    moved = checkpointer.set_aside_unhealthy()
    latest = checkpointer.latest()
    kept = (
        f"the newest checkpoint, {latest.name}, is the last good one"
        if latest
        else "no good checkpoint was written"
    )
    if moved:
        after = guard.first_sign
        if guard.drifted:
            after = f"the loss's lowest point (step {guard.lowest[1]})"
        kept += f"; the {len(moved)} written after {after} are now step-N.unhealthy"
    if guard.drifted:
        return TrainingDiverged(
            f"Training diverged at step {guard.failed_at}: {guard.drifted}, and {kept}; lower "
            f"train.learning_rate (now {train.learning_rate:g}) or raise train.warmup_steps "
            f"(now {train.warmup_steps}), then rerun to resume (train.divergence_factor, now "
            f"{train.divergence_factor:g}, sets the rule; 0 turns it off)."
        )
    if train.on_nonfinite == "stop":
        what, advice = "a step", "or set train.on_nonfinite=skip"
    else:
        what = f"{guard.in_a_row} steps in a row"
        advice = f"or raise train.max_nonfinite_skips (now {train.max_nonfinite_skips})"
    cause = "a non-finite loss or gradient norm"
    if train.mixed_precision == "mixed_float16":
        cause = "non-finite gradients at the loss scale's floor, or a non-finite moment"
    return TrainingDiverged(
        f"Training diverged at step {guard.failed_at}: {what} had {cause}, whose update "
        f"was not applied, and {kept}; lower train.learning_rate (now "
        f"{train.learning_rate:g}) {advice}, then rerun to resume."
    )
