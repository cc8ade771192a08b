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
import time
from pathlib import Path

import keras
import tensorflow as tf

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.data.pipeline import pretraining_dataset
from electra_tf.data.tfrecords import check_first_record, count_records, resolve_files
from electra_tf.pretraining.callbacks import (
    FlopsBudget,
    NonfiniteGuard,
    StepCheckpoint,
    StepScalars,
    Throughput,
)
from electra_tf.pretraining.checkpoint import Checkpointer
from electra_tf.pretraining.distribute import make_strategy, worker_info
from electra_tf.pretraining.objectives import train_flops_per_step
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.warm_start import apply_warm_start

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


def config_for_data(config: ElectraConfig, explicit=()) -> ElectraConfig:
    """The config with the vocabulary size, special ids and length the data record.

    A prepare folder's `manifest.json` (also beside shards given as files or globs) is
    the one source of truth: a value of it that the user set otherwise (`explicit`, the
    `section.key`s of their overrides) fails in one sentence, as does a `data.vocab_file`
    with other tokens. Shards without a manifest need `data.vocab_file`.
    """
    from electra_tf.data.tfrecords import DataError

    spec = config.data.train_files
    _, _, manifest = resolve_files(spec)
    if manifest is None:
        if config.data.vocab_file:
            return config_for_vocabulary(config, config.data.vocab_file)
        raise DataError(
            f"The training files {spec} have no manifest.json beside them, so their "
            "vocabulary is unknown; pass --vocab-file (the vocabulary they were packed with) "
            "or the folder `electra-tf prepare` wrote."
        )
    source = f"{manifest.folder}/manifest.json"
    recorded = {"data.sequence_length": manifest.sequence_length}
    recorded.update({f"data.{name}_id": int(v) for name, v in manifest.special_ids.items()})
    if manifest.vocabulary_size:
        recorded["model.vocabulary_size"] = manifest.vocabulary_size
    for key, value in recorded.items():
        section, name = key.split(".")
        current = getattr(getattr(config, section), name)
        if key in explicit and current != value:
            raise ConfigError(
                f"{key}={current} disagrees with {source} ({value}); leave it out, the data "
                "decide it."
            )
    data = {k.split(".")[1]: v for k, v in recorded.items() if k.startswith("data.")}
    if manifest.vocab_file:
        packed_with = str(Path(manifest.folder) / manifest.vocab_file)
        if config.data.vocab_file:
            from electra_tf.pretraining.warm_start import check_vocabulary

            check_vocabulary(config.data.vocab_file, packed_with, spec)
        else:
            data["vocab_file"] = packed_with
    if "lower_case" in manifest.extra:
        data["lower_case"] = bool(manifest.extra["lower_case"])
    updates = {"data": data}
    if "model.vocabulary_size" in recorded:
        updates["model"] = {"vocabulary_size": recorded["model.vocabulary_size"]}
    return config.update(updates, source=source)


def config_for_vocabulary(config: ElectraConfig, vocab_file) -> ElectraConfig:
    """The config with a vocabulary file's size and special ids (for raw-text runs)."""
    from electra_tf.data.vocabulary import read_vocabulary, special_ids

    tokens = read_vocabulary(vocab_file)
    ids = special_ids(tokens)
    return config.update(
        {
            "model": {"vocabulary_size": len(tokens)},
            "data": {"vocab_file": str(vocab_file), **{f"{k}_id": v for k, v in ids.items()}},
        },
        source=str(vocab_file),
    )


def check_resume_config(saved: ElectraConfig, current: ElectraConfig, folder) -> None:
    """Resuming needs the same model, objective and data; the train section may change."""
    for section in ("model", "objective", "data"):
        old, new = getattr(saved, section), getattr(current, section)
        for field in dataclasses.fields(old):
            a, b = getattr(old, field.name), getattr(new, field.name)
            if a != b:
                raise ConfigError(
                    f"{folder} holds a run with {section}.{field.name}={a!r}, but this run asks "
                    f"for {b!r}; resume with the same value or use a new --output-dir."
                )


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
        output_dir: the run folder.
        verbose: Keras progress-bar verbosity.
        resume: False refuses to start over a folder with checkpoints.
        callbacks: extra Keras callbacks.
        max_steps: stop after this many steps in this call (the run can be resumed).
        save_steps: steps to checkpoint besides every `train.checkpoint_every` (they are
            subject to `train.keep_checkpoints` like the others).
        text_sources: corpus sources (`electra_tf.data.corpus`) to stream from instead of
            prepared files: tokenized with `data.vocab_file` and packed on the fly
            (`electra_tf.data.streaming`); one pipeline, on the default or a mirrored strategy.
        lower_case: lower-case (and strip accents) when streaming; None: `data.lower_case`.
        warm_start: a `WarmStart` whose weights a new run starts from (continued
            pre-training; `config` must come from `config_for_warm_start`). A run that
            resumes from its own checkpoint ignores it.

    Returns:
        `RunResult`.
    """
    started = time.perf_counter()
    output_dir = Path(output_dir)
    train = config.train
    strategy = make_strategy(train)
    is_chief, worker_id = worker_info()

    if text_sources is None:
        files, counts, _ = resolve_files(config.data.train_files)
        check_first_record(files, config.data.sequence_length)
        if counts is None:
            counts = count_records(files)
    elif train.strategy not in ("default", "mirrored"):
        raise ConfigError(
            f"Streaming from text runs one input pipeline; train.strategy={train.strategy!r} "
            "needs prepared data (electra-tf prepare)."
        )

    checkpointer_dir = output_dir / "checkpoints"
    keras.utils.set_random_seed(train.seed)
    with strategy.scope():
        model = ElectraPretrainer(config)
        model.compile()
    checkpointer = Checkpointer(
        checkpointer_dir,
        model,
        keep=train.keep_checkpoints,
        is_chief=is_chief,
        worker_id=worker_id,
    )
    start, restored = 0, False
    while (latest := checkpointer.latest()) is not None:
        if not resume:
            raise ConfigError(
                f"{output_dir} already holds checkpoints (latest {latest.name}); resume it "
                "or choose a new --output-dir."
            )
        saved = ElectraConfig.from_json((latest / "config.json").read_text(), str(latest))
        check_resume_config(saved, config, latest)
        try:
            start, restored = checkpointer.restore(latest), True
            break
        except (tf.errors.OpError, ValueError, KeyError) as error:
            # It verified (a checkpoint older than records) but does not read: set it aside.
            reason = getattr(error, "message", str(error)).splitlines()[0][:200]
            checkpointer.move_aside(latest, f"reading it failed: {reason}")
            if not checkpointer.is_chief:
                raise
    if not restored and warm_start is not None:
        apply_warm_start(model, warm_start)
    if is_chief:
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / "config.json").write_text(config.to_json() + "\n")

    total = train.num_steps
    flops_per_step = train_flops_per_step(config)
    if train.flops_budget:
        total = min(total, int(-(-train.flops_budget // flops_per_step)))
    steps = max(0, total - start)
    if max_steps is not None:
        steps = min(steps, max_steps)

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

    if text_sources is not None:
        from electra_tf.data.streaming import text_dataset
        from electra_tf.data.tokenizer import ElectraTokenizer

        if not config.data.vocab_file:
            raise ConfigError("Streaming from text needs data.vocab_file (--vocab-file).")
        dataset = text_dataset(
            text_sources,
            ElectraTokenizer(
                config.data.vocab_file,
                lower_case=config.data.lower_case if lower_case is None else lower_case,
            ),
            sequence_length=config.data.sequence_length,
            batch_size=train.batch_size,
            seed=train.seed,
            start_step=start,
        )
        if train.strategy != "default":
            dataset = strategy.experimental_distribute_dataset(dataset)
    elif train.strategy == "default":
        dataset = dataset_fn()
    else:
        dataset = strategy.distribute_datasets_from_function(dataset_fn)

    scalars = StepScalars(output_dir / "logs", every=train.log_every, enabled=is_chief)
    guard = NonfiniteGuard(train.on_nonfinite, train.max_nonfinite_skips)
    run_callbacks = [
        Throughput(train.batch_size * config.data.sequence_length),
        FlopsBudget(flops_per_step, train.flops_budget),
        guard,  # before the checkpoints: a failed step is never saved
        scalars,
        StepCheckpoint(checkpointer, every=train.checkpoint_every, at=save_steps),
        *callbacks,
    ]
    logs = {}
    if steps > 0:
        try:
            history = model.fit(
                dataset, epochs=1, steps_per_epoch=steps, callbacks=run_callbacks, verbose=verbose
            )
        except _WORKER_ERRORS as error:
            if train.strategy != "multi_worker":
                raise
            latest = checkpointer.latest() if is_chief else None
            resume_from = (
                f"its last checkpoint ({latest.name})" if latest else "its last checkpoint"
            )
            reason = error.message.splitlines()[0].split("}} ")[-1][:160]
            raise WorkerLost(
                f"A worker of this multi-worker run was lost at step "
                f"{int(model.optimizer.iterations.numpy())} ({type(error).__name__}: {reason}); "
                f"relaunch every worker with the same command: the run resumes from {resume_from}."
            ) from None
        logs = {name: float(values[-1]) for name, values in history.history.items()}
    step = int(model.optimizer.iterations.numpy())
    if is_chief:
        summary = {
            "step": step,
            "resumed_from": start,
            "status": "diverged" if guard.failed_at else "finished",
            "nonfinite_steps_skipped": guard.skipped,
            "logs": _json_safe(logs),
            "window_logs": _json_safe(scalars.last_logs),
        }
        (output_dir / "last_run.json").write_text(json.dumps(summary, indent=2) + "\n")
    if guard.failed_at:
        latest = checkpointer.latest()
        kept = (
            f"the newest checkpoint, {latest.name}, is the last good one"
            if latest
            else ("no checkpoint was written")
        )
        what = "a step" if train.on_nonfinite == "stop" else f"{guard.in_a_row} steps in a row"
        raise TrainingDiverged(
            f"Training diverged at step {guard.failed_at}: {what} had a non-finite loss or "
            f"gradient norm, whose update was not applied, and {kept}; lower "
            f"train.learning_rate (now {train.learning_rate:g}) or set "
            "train.on_nonfinite=skip, then rerun to resume."
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
