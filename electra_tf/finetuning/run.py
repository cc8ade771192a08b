"""Fine-tune and evaluate over several seeds, and summarize (median, mean, spread).

`finetune(task, init, data, config, output_dir)` runs `config.seeds`
fine-tunings of a classification or regression task from the same
initialization, evaluates each on the dev (and test) sets after the last
epoch, and writes `results.json` (every run, every metric) and `results.md`
(a table of median / mean / std / min / max). SQuAD runs through
`electra_tf.finetuning.squad`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.finetuning import metrics as metric_functions
from electra_tf.finetuning.config import FinetuneConfig
from electra_tf.finetuning.init import Initialization
from electra_tf.finetuning.optimizer import LayerwiseAdamW, layerwise_multipliers
from electra_tf.finetuning.tasks import Task
from electra_tf.models.finetuning import ElectraClassifier
from electra_tf.pretraining.optimizer import WarmupLinearDecay

__all__ = ["encode_examples", "score", "finetune_once", "finetune", "summarize"]


def encode_examples(
    examples, tokenizer: ElectraTokenizer, task: Task, max_seq_length: int, batch: int = 2048
) -> tuple[dict, np.ndarray]:
    """Tokenized, packed inputs (numpy, int32 `[N, max_seq_length]`) and labels of examples."""
    features = {"token_ids": [], "padding_mask": [], "segment_ids": []}
    for start in range(0, len(examples), batch):
        chunk = examples[start : start + batch]
        a = tokenizer.tokenize([e.text_a for e in chunk])
        b = tokenizer.tokenize([e.text_b for e in chunk]) if task.pair else None
        packed = pack_inputs(
            a,
            b,
            sequence_length=max_seq_length,
            cls_id=tokenizer.cls_id,
            sep_id=tokenizer.sep_id,
            pad_id=tokenizer.pad_id,
        )
        for key in features:
            features[key].append(packed[key].numpy())
    features = {
        k: np.concatenate(v) if v else np.zeros((0, max_seq_length), np.int32)
        for k, v in features.items()
    }
    dtype = np.float32 if task.kind == "regression" else np.int32
    labels = np.asarray([e.label for e in examples], dtype)
    return features, labels


def score(task: Task, labels, predictions) -> dict:
    """The task's metrics on one set (predictions: class ids, or floats for regression)."""
    results = {}
    for name in task.metrics:
        if name == "accuracy":
            results[name] = metric_functions.accuracy(labels, predictions)
        elif name == "f1":
            results[name] = metric_functions.f1_binary(labels, predictions)
        elif name == "mcc":
            results[name] = metric_functions.matthews_corrcoef(labels, predictions)
        elif name == "spearman":
            results[name] = metric_functions.spearman(labels, predictions)
        elif name == "pearson":
            results[name] = metric_functions.pearson(labels, predictions)
    return results


def _dataset(features, labels, batch_size, shuffle_seed=None):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(labels), seed=shuffle_seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def _predict(model, task: Task, features, batch_size) -> np.ndarray:
    outputs = model.predict(
        _dataset(features, np.zeros(len(features["token_ids"])), batch_size).map(lambda x, y: x),
        verbose=0,
    )
    return outputs if task.kind == "regression" else np.argmax(outputs, axis=-1)


def finetune_once(
    init: Initialization, task: Task, train, evaluation: dict, config: FinetuneConfig, seed: int
) -> dict:
    """One fine-tuning run; returns {set name: metrics} after the last epoch.

    Args:
        init: the encoder initialization.
        task: the task.
        train: (features, labels) of the training set.
        evaluation: {set name: (features, labels)} scored at the end.
        config: resolved fine-tuning config.
        seed: seeds the head's init, dropout and the data order.
    """
    keras.utils.set_random_seed(seed)
    encoder = init.build_encoder(dropout=config.dropout)
    model = ElectraClassifier(encoder, task.num_outputs, dropout=config.dropout)
    model.build()
    features, labels = train
    steps_per_epoch = int(np.ceil(len(labels) / config.batch_size))
    total = steps_per_epoch * config.epochs
    schedule = WarmupLinearDecay(
        config.learning_rate, total_steps=total, warmup_steps=int(config.warmup_fraction * total)
    )
    multipliers = layerwise_multipliers(
        model, config.layerwise_decay, reference=config.layerwise_decay_reference
    )
    optimizer = LayerwiseAdamW(
        multipliers=multipliers,
        learning_rate=schedule,
        weight_decay=config.weight_decay,
        epsilon=config.adam_epsilon,
        clip_norm=config.clip_norm,
    )
    if task.kind == "regression":
        loss = keras.losses.MeanSquaredError()
    else:
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=optimizer, loss=loss)
    history = model.fit(
        _dataset(features, labels, config.batch_size, shuffle_seed=seed),
        epochs=config.epochs,
        shuffle=False,  # the dataset shuffles itself (seeded); Keras would warn and ignore it
        verbose=0,
    )
    results = {"train_loss": [float(x) for x in history.history["loss"]]}
    for name, (eval_features, eval_labels) in evaluation.items():
        predictions = _predict(model, task, eval_features, config.eval_batch_size)
        results[name] = score(task, eval_labels, predictions)
    return results


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
    data: dict,
    config: FinetuneConfig,
    output_dir=None,
    progress=print,
) -> dict:
    """Fine-tunes `config.seeds` times and summarizes.

    Args:
        task: the task.
        init: the encoder initialization.
        data: {"train": [Example], "dev": [Example], ...}; every set but train is scored.
        config: the fine-tuning config (paper values filled in here).
        output_dir: where results.json and results.md go (optional).

    Returns:
        {"config", "task", "init", "runs", "summary", "seconds"}.
    """
    if task.kind == "span":
        raise ConfigError("Span tasks (SQuAD) run through electra_tf.finetuning.squad.")
    started = time.perf_counter()
    config = config.resolved(init.encoder_config["hidden_dim"], task.epochs)
    tokenizer = ElectraTokenizer(init.vocab_file, lower_case=init.lower_case)
    train_examples = data["train"]
    if config.max_train_examples:
        train_examples = train_examples[: config.max_train_examples]
    if not train_examples:
        raise ConfigError(f"No training examples for {task.name}.")
    train = encode_examples(train_examples, tokenizer, task, config.max_seq_length)
    evaluation = {
        name: encode_examples(examples, tokenizer, task, config.max_seq_length)
        for name, examples in data.items()
        if name != "train" and examples
    }
    runs = []
    for k in range(config.seeds):
        seed = config.seed + k
        result = finetune_once(init, task, train, evaluation, config, seed)
        result["seed"] = seed
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
        "eval_examples": {n: int(len(v[1])) for n, v in evaluation.items()},
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
