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
import time
from pathlib import Path

import keras

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.data.pipeline import pretraining_dataset
from electra_tf.data.tfrecords import check_first_record, count_records, resolve_files
from electra_tf.pretraining.callbacks import FlopsBudget, StepCheckpoint, StepScalars, Throughput
from electra_tf.pretraining.checkpoint import Checkpointer
from electra_tf.pretraining.distribute import make_strategy, worker_info
from electra_tf.pretraining.objectives import train_flops_per_step
from electra_tf.pretraining.pretrainer import ElectraPretrainer

__all__ = ["RunResult", "run_pretraining", "config_for_data", "check_resume_config"]


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


def config_for_data(config: ElectraConfig) -> ElectraConfig:
    """The config with the vocabulary size and special ids a prepare folder records."""
    _, _, manifest = resolve_files(config.data.train_files)
    if manifest is None:
        return config
    updates = {"data": {"sequence_length": manifest.sequence_length}}
    if manifest.vocab_file and not config.data.vocab_file:
        updates["data"]["vocab_file"] = str(Path(manifest.folder) / manifest.vocab_file)
    for name, value in manifest.special_ids.items():
        updates["data"][f"{name}_id"] = int(value)
    if manifest.vocabulary_size:
        updates["model"] = {"vocabulary_size": manifest.vocabulary_size}
    return config.update(updates, source=f"{manifest.folder}/manifest.json")


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
    lower_case: bool = True,
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
        lower_case: lower-case (and strip accents) when streaming, for uncased vocabularies.

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
    start = 0
    latest = checkpointer.latest()
    if latest is not None:
        if not resume:
            raise ConfigError(
                f"{output_dir} already holds checkpoints (latest {latest.name}); resume it "
                "or choose a new --output-dir."
            )
        saved = ElectraConfig.from_json((latest / "config.json").read_text(), str(latest))
        check_resume_config(saved, config, latest)
        start = checkpointer.restore(latest)
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
            ElectraTokenizer(config.data.vocab_file, lower_case=lower_case),
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
    run_callbacks = [
        Throughput(train.batch_size * config.data.sequence_length),
        FlopsBudget(flops_per_step, train.flops_budget),
        scalars,
        StepCheckpoint(checkpointer, every=train.checkpoint_every, at=save_steps),
        *callbacks,
    ]
    logs = {}
    if steps > 0:
        history = model.fit(
            dataset, epochs=1, steps_per_epoch=steps, callbacks=run_callbacks, verbose=verbose
        )
        logs = {name: float(values[-1]) for name, values in history.history.items()}
    step = int(model.optimizer.iterations.numpy())
    if is_chief:
        summary = {
            "step": step,
            "resumed_from": start,
            "logs": logs,
            "window_logs": scalars.last_logs,
        }
        (output_dir / "last_run.json").write_text(json.dumps(summary, indent=2) + "\n")
    return RunResult(
        model=model,
        step=step,
        logs=scalars.last_logs or logs,
        output_dir=output_dir,
        checkpoint=checkpointer.latest(),
        seconds=time.perf_counter() - started,
        resumed_from=start,
    )
