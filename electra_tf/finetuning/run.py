"""Fine-tune and evaluate over several seeds, and summarize (median, mean, spread).

One driver for every task: `finetune(task, init, splits, config, output_dir)`
encodes the splits once, then runs `config.seeds` fine-tunings from the same
initialization (each seed: a fresh copy of the encoder, the task's head, the
layer-wise AdamW with warmup and linear decay), scores every split but train
after the last epoch, and writes `results.json` (every run, every metric)
and `results.md` (median / mean / std / min / max). What is task-specific
(features, head, loss, scoring) comes from the task's kind
(`electra_tf.finetuning.kinds`). `finetune_task` adds reading the task's
data and its initialization by name, as `electra-tf finetune` does.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import keras
import numpy as np

from electra_tf.config import ConfigError
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.finetuning.config import FinetuneConfig, load_finetune_recipe
from electra_tf.finetuning.initialization import Initialization, load_initialization
from electra_tf.finetuning.kinds import kind_of
from electra_tf.finetuning.optimizer import LayerwiseAdamW, layerwise_multipliers
from electra_tf.finetuning.readers import ReadReport
from electra_tf.finetuning.sources import task_splits
from electra_tf.finetuning.tasks import Task, get_task
from electra_tf.pretraining.optimizer import WarmupLinearDecay

__all__ = ["finetune", "finetune_task", "finetuning_optimizer", "summarize"]


def finetuning_optimizer(model, config: FinetuneConfig, total_steps: int) -> LayerwiseAdamW:
    """Layer-wise AdamW with 10% (`warmup_fraction`) warmup, then linear decay to 0."""
    schedule = WarmupLinearDecay(
        config.learning_rate,
        total_steps=total_steps,
        warmup_steps=int(config.warmup_fraction * total_steps),
    )
    return LayerwiseAdamW(
        multipliers=layerwise_multipliers(
            model, config.layerwise_decay, reference=config.layerwise_decay_reference
        ),
        learning_rate=schedule,
        weight_decay=config.weight_decay,
        epsilon=config.adam_epsilon,
        clip_norm=config.clip_norm,
    )


def summarize(runs: list[dict], sets) -> dict:
    """Per set and metric: median, mean, std, min and max over the runs."""
    summary = {}
    for name in sets:
        for metric in runs[0][name]:
            values = np.asarray([run[name][metric] for run in runs], np.float64)
            summary[f"{name}/{metric}"] = {
                "median": float(np.median(values)),
                "mean": float(values.mean()),
                "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
                "min": float(values.min()),
                "max": float(values.max()),
                "n": int(len(values)),
            }
    return summary


def _table(summary: dict, title: str) -> str:
    lines = [
        f"# {title}",
        "",
        "| set/metric | median | mean | std | min | max | n |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, s in summary.items():
        lines.append(
            f"| {key} | {s['median']:.4f} | {s['mean']:.4f} | {s['std']:.4f} | "
            f"{s['min']:.4f} | {s['max']:.4f} | {s['n']} |"
        )
    return "\n".join(lines) + "\n"


def finetune(
    task: Task,
    init: Initialization,
    splits: dict,
    config: FinetuneConfig,
    output_dir=None,
    progress=print,
) -> dict:
    """Fine-tunes `config.seeds` times and summarizes.

    Args:
        task: the task.
        init: the encoder initialization.
        splits: {"train": [example], "dev": [example], ...}; every split but train is
            scored. Examples are the readers' `Example`s, or `SquadExample`s for spans.
        config: the fine-tuning config (paper values filled in here).
        output_dir: where results.json and results.md go (optional).
        progress: called with one line per seed (None: quiet).

    Returns:
        {"task", "init", "config", "train_examples", "eval_examples", "runs", "summary",
        "seconds"}.
    """
    started = time.perf_counter()
    config = config.resolved(init.encoder_config["hidden_dim"], task.epochs)
    tokenizer = ElectraTokenizer(init.vocab_file, lower_case=init.lower_case)
    kind = kind_of(task)
    train_examples = splits["train"]
    if config.max_train_examples:
        train_examples = train_examples[: config.max_train_examples]
    if not train_examples:
        raise ConfigError(f"No training examples for {task.name}.")
    train = kind.encode(train_examples, tokenizer, task, config)
    evaluation = {
        name: kind.encode(examples, tokenizer, task, config)
        for name, examples in splits.items()
        if name != "train" and examples
    }
    total_steps = int(np.ceil(train.rows / config.batch_size)) * config.epochs
    runs = []
    for k in range(config.seeds):
        seed = config.seed + k
        keras.utils.set_random_seed(seed)  # the head's init, dropout and the data order
        model = kind.build_model(init.build_encoder(dropout=config.dropout), task, config)
        optimizer = finetuning_optimizer(model, config, total_steps)
        result = {"seed": seed}
        result["train_loss"] = kind.fit(model, train, optimizer, task, config, seed)
        for name, split in evaluation.items():
            result[name] = kind.score(model, split, task, config)
        runs.append(result)
        if progress:
            shown = {n: {m: round(v, 4) for m, v in result[n].items()} for n in evaluation}
            progress(f"[finetune] {task.name} seed {seed}: {json.dumps(shown)}")
    summary = summarize(runs, list(evaluation))
    report = {
        "task": task.name,
        "init": init.source,
        "config": dataclasses.asdict(config),
        "train_examples": len(train_examples),
        "eval_examples": {n: len(split.examples) for n, split in evaluation.items()},
        "runs": runs,
        "summary": summary,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if output_dir is not None:
        output_dir = Path(output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / "results.json").write_text(json.dumps(report, indent=2) + "\n")
        title = f"{task.name} from {init.source} ({config.seeds} seeds)"
        (output_dir / "results.md").write_text(_table(summary, title))
    return report


def finetune_task(
    task_name: str,
    init_spec: str,
    *,
    recipe: str | None = None,
    overrides=(),
    vocab_file: str | None = None,
    data_dir=None,
    movie_file=None,
    fetch_dir=None,
    tfds: bool = False,
    tfds_data_dir=None,
    output_dir=None,
    progress=print,
) -> dict:
    """`finetune` of a task by name from an initialization by name, reading the task's data.

    Args:
        task_name: a task of `electra_tf.finetuning.tasks.TASKS`.
        init_spec: anything `load_initialization` reads.
        recipe: the fine-tuning recipe (default: the task's own).
        overrides: `key=value` fine-tuning overrides.
        vocab_file: the vocabulary, when the initialization has none.
        data_dir, movie_file, fetch_dir, tfds, tfds_data_dir: where the task's data is
            (see `task_splits`).
        output_dir, progress: as `finetune`.

    Returns:
        The `finetune` report, plus `skipped`: what reading the data skipped, by reason.
    """
    task = get_task(task_name)
    config = load_finetune_recipe(recipe or task.name).override(*overrides)
    init = load_initialization(init_spec, vocab_file)
    read = ReadReport()
    splits = task_splits(
        task,
        data_dir=data_dir,
        tfds=tfds,
        tfds_data_dir=tfds_data_dir,
        movie_file=movie_file,
        fetch_dir=fetch_dir,
        report=read,
    )
    report = finetune(task, init, splits, config, output_dir, progress=progress)
    report["skipped"] = dict(read.skipped)
    if read.skipped_ids:
        report["skipped_ids"] = sorted(read.skipped_ids)
    if output_dir is not None:
        (Path(output_dir) / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    return report
