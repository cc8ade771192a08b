"""Fine-tune over several seeds, keep the best model on dev, summarize (median, mean, spread).

One driver for every task: `finetune(task, init, splits, config, output_dir)`
runs `config.seeds` fine-tunings from the same initialization through the
engine (`electra_tf.finetuning.engine`: each seed keeps its best epoch on dev
and resumes after a kill), keeps the model of the best seed on dev in
`output_dir/model/` (`electra_tf.tasks.model_folder`), writes every
evaluation split's predictions from that model to `predictions/<split>.jsonl`,
and writes `results.json` (every seed, every metric) and `results.md`
(median / mean / std / min / max over seeds). The test split never chooses
anything: epochs and seeds are chosen on dev. `finetune_task` reads a named
task's data; `finetune_files` the user's own files.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import keras
import numpy as np

from electra_tf.config import ConfigError
from electra_tf.datasets.readers import ReadReport
from electra_tf.datasets.sources import task_splits
from electra_tf.datasets.tasks import Task, get_task
from electra_tf.finetuning.best_weights import BEST_WEIGHTS, best_file, read_best, remove_best
from electra_tf.finetuning.engine import train_seed
from electra_tf.finetuning.request import check_request
from electra_tf.io.durable import recover_folder, write_atomic
from electra_tf.runtime import grappler, op_stacks
from electra_tf.tasks.config import FinetuneConfig, load_finetune_recipe
from electra_tf.tasks.initialization import Initialization, load_initialization
from electra_tf.tasks.model_folder import read_model_info, write_model_folder
from electra_tf.tasks.optimizer import depth_rates
from electra_tf.tasks.registry import get_kind

__all__ = [
    "finetune",
    "finetune_task",
    "summarize",
    "make_job",
    "selection_split",
    "sample_rows",
]


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


def _table(summary: dict, title: str, note: str = "") -> str:
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
    return "\n".join(lines) + "\n" + (f"\n{note}\n" if note else "")


def selection_split(splits: dict) -> str:
    """The split that chooses epochs and seeds: "dev", else the first dev-like split."""
    if "dev" in splits:
        return "dev"
    for name in splits:
        if name.startswith("dev"):
            return name
    raise ConfigError("Fine-tuning needs a dev split to choose epochs and the kept model.")


def make_job(task: Task, splits: dict):
    """The job that fine-tunes `task`: its registered kind, bound to the splits
    (`electra_tf.tasks.registry`)."""
    return get_kind(task.kind)(task, splits)


def sample_rows(rows: list, count: int, seed: int = 0) -> list:
    """`count` rows drawn at random (the same ones for every fine-tuning seed), in file order.

    A file's first rows are no sample: files are often grouped by label or source.

    >>> sample_rows(list(range(10)), 4)
    [2, 4, 5, 7]
    """
    if not count or count >= len(rows):
        return list(rows)
    chosen = np.random.default_rng(seed).choice(len(rows), size=count, replace=False)
    return [rows[i] for i in sorted(chosen)]


def _keep_best(job, init, config, folder: Path, runs: list[dict], info: dict, log, trained=None):
    """Publishes the best seed's model as `folder/model/` unless it is there, with this note.

    `trained` is the newest seed's model with its best weights (None: built from them).
    Returns (the best seed's result, the model published now or None)."""
    metric, split = job.main_metric, job.selection
    best = max(runs, key=lambda run: (run[split][metric], -run["seed"]))
    model_dir = folder / "model"
    kept = read_model_info(model_dir) if (model_dir / "finetuned.json").exists() else None
    seed_folder = folder / "seeds" / f"seed-{best['seed']}"
    weights = best_file(seed_folder) or seed_folder / BEST_WEIGHTS
    note = f"seed {best['seed']}, epoch {best['best_epoch']}: best {split} {metric} "
    note += f"of {len(runs)} seed(s)" if len(runs) > 1 else "(one seed)"
    model = None
    # Republished when the best seed changes, and when more seeds back the same choice.
    if kept is None or (kept.get("seed"), kept.get("selected_by")) != (best["seed"], note):
        if not weights.is_file():
            raise ConfigError(f"The best seed's weights {weights} are missing; fine-tune again.")
        if trained is not None and runs[-1]["seed"] == best["seed"]:
            model = trained
        else:
            model = job.build(init, config)
            read_best(model, weights)
        write_model_folder(
            model,
            model_dir,
            {
                **info,
                "seed": best["seed"],
                "epoch": best["best_epoch"],
                "selected_by": note,
                "metrics": {s: best[s] for s in job.splits()},
                "vocabulary_tokens": _vocabulary(init),
            },
        )
        if log:
            log(f"kept the model of {note} in {model_dir}")
    for run in runs:  # other seeds' weights are no longer needed
        if run["seed"] != best["seed"]:
            remove_best(folder / "seeds" / f"seed-{run['seed']}")
    return best, model


def _vocabulary(init: Initialization) -> list[str]:
    from electra_tf.data.vocabulary import read_vocabulary

    return read_vocabulary(init.vocab_file)


def _cut_rows(job, model, config, log) -> dict:
    """{split: rows longer than max_seq_length} (cut when packed), said once if any."""
    cut = {split: job.cut_rows(model, split) for split, rows in job.examples.items() if rows}
    if log and any(cut.values()):
        counts = ", ".join(f"{split} {n}" for split, n in cut.items() if n)
        log(
            f"rows longer than max_seq_length {config.max_seq_length} were cut to it: {counts} "
            "(--max-seq-length up to the encoder's positions keeps more)"
        )
    return cut


def _write_predictions(job, folder: Path, model, log) -> dict:
    """Every evaluation split's predictions from the kept model, as JSON Lines."""
    if not hasattr(job, "predictions"):
        return {}
    written = {}
    for split in job.examples:
        if split == "train" or not job.examples[split]:
            continue
        path = folder / "predictions" / f"{split}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = "".join(
            json.dumps(row, ensure_ascii=False) + "\n" for row in job.predictions(model, split)
        )
        write_atomic(path, lines)
        written[split] = str(path)
    if log and written:
        log(f"predictions: {', '.join(written.values())}")
    return written


RECIPE_NAMES = {"standard": "transformers' example scripts", "paper": "the ELECTRA paper's"}


def _log_rates(log, init: Initialization, config) -> None:
    """One line: the defaults' recipe, the peak learning rate and each depth's share of it
    (layer-wise decay), the warmup, Adam's epsilon and the batch order."""
    if log:
        rates = depth_rates(
            init.encoder_config["num_layers"], config.layerwise_decay,
            config.layerwise_decay_reference,
        )  # fmt: skip
        order = "length-grouped" if config.group_by_length else "random"
        log(f"defaults {config.defaults} ({RECIPE_NAMES[config.defaults]} recipe): learning "
            f"rate {config.learning_rate:g}, layer-wise decay {config.layerwise_decay:g}: "
            f"{rates}; warmup {config.warmup_fraction:g}, Adam epsilon "
            f"{config.adam_epsilon:g}, {order} batches")  # fmt: skip


def _model_info(task: Task, init: Initialization, config, request: dict) -> dict:
    """What the kept model folder records besides its seed and metrics."""
    return {
        "kind": task.kind,
        "labels": list(task.labels),
        "pair": task.pair,
        "max_seq_length": config.max_seq_length,
        "lower_case": init.lower_case,
        **{k: v for k, v in request.items() if k != "config"},
    }


def _train_seeds(job, init, config, folder: Path, info: dict, log):
    """Every seed in turn, the best so far kept after each; (runs, best run, model kept now)."""
    runs, kept_model = [], None
    for seed in range(config.seed, config.seed + config.seeds):
        trained = {}
        runs.append(
            train_seed(job, init, config, seed, folder / "seeds" / f"seed-{seed}", log, trained)
        )
        if log:
            shown = {n: {m: round(v, 4) for m, v in runs[-1][n].items()} for n in job.splits()}
            log(f"seed {seed} (best epoch {runs[-1]['best_epoch']}): {json.dumps(shown)}")
        best, published = _keep_best(
            job, init, config, folder, runs, info, log, trained.get("model")
        )
        kept_model = published or kept_model
    return runs, best, kept_model


def finetune(
    task: Task,
    init: Initialization,
    splits: dict,
    config: FinetuneConfig,
    output_dir=None,
    progress=print,
    request: dict | None = None,
) -> dict:
    """Fine-tunes `config.seeds` times, keeps the best model on dev and summarizes.

    Args:
        task: the task.
        init: the encoder initialization.
        splits: {"train": [example], "dev": [example], ...}; every split but train is
            scored (when labelled) and predicted. Examples are the readers' `Example`s,
            `TaggedSentence`s for tagging, `SquadExample`s for question answering.
        config: the fine-tuning config (paper values filled in here).
        output_dir: the run folder (a temporary one when None, deleted at the end).
        progress: called with progress lines (None: quiet).
        request: what was asked (data files, columns, ...), recorded and checked on resume.

    Returns:
        {"task", "init", "config", "backend" (Keras's), "train_examples", "eval_examples",
        "runs", "summary", "kept", "model", "predictions", "seconds"}.
    """
    started = time.perf_counter()
    config = config.resolved(init.encoder_config["hidden_dim"], task.epochs)
    splits = dict(splits)
    if config.max_train_examples:
        splits["train"] = sample_rows(splits["train"], config.max_train_examples)
    if not splits.get("train"):
        raise ConfigError(f"No training examples for {task.name}.")
    job = make_job(task, splits)
    job.check_config(config)
    job.selection = selection_split(splits)
    temporary = output_dir is None
    folder = Path(tempfile.mkdtemp(prefix="electra-tf-finetune-") if temporary else output_dir)
    settings = {k: v for k, v in dataclasses.asdict(config).items() if k != "seeds"}
    source = os.path.abspath(init.source) if os.path.exists(init.source) else init.source
    request = {"task": task.name, "init": source, "config": settings, **(request or {})}
    check_request(folder, request)
    recover_folder(folder / "model")  # a kept model whose publishing was killed midway
    log = (lambda line: progress(f"[finetune] {task.name} {line}")) if progress else None
    _log_rates(log, init, config)
    info = _model_info(task, init, config, request)
    # This call's graphs: one op-creation stack, and no Grappler rewrites (each module says
    # why; ELECTRA_TF_OP_STACKS=1 and ELECTRA_TF_GRAPPLER=1 turn them back).
    with op_stacks.fixed(), grappler.off():
        runs, best, kept_model = _train_seeds(job, init, config, folder, info, log)
        if kept_model is None:  # every seed was done already: read the kept model
            from electra_tf.tasks.model_folder import load_finetuned

            kept_model, _ = load_finetuned(folder)
        predictions = _write_predictions(job, folder, kept_model, log)
        cut_rows = _cut_rows(job, kept_model, config, log)
    report = {
        "task": task.name,
        "init": init.source,
        "config": dataclasses.asdict(config),
        "backend": keras.config.backend(),
        "train_examples": len(splits["train"]),
        "eval_examples": {n: len(rows) for n, rows in splits.items() if n != "train"},
        "runs": runs,
        "summary": summarize(runs, job.splits()),
        "kept": {"seed": best["seed"], "epoch": best["best_epoch"], "selected_on": job.selection},
        "model": str(folder / "model"),
        "predictions": predictions,
        "cut_rows": cut_rows,
        "seconds": round(time.perf_counter() - started, 1),
    }
    _write_results(folder, report, job)
    if temporary:
        shutil.rmtree(folder, ignore_errors=True)
    return report


def _write_results(folder: Path, report: dict, job) -> None:
    """`results.json` and `results.md` (the summary table, and which model was kept)."""
    write_atomic(folder / "results.json", json.dumps(report, indent=2) + "\n")
    kept = report["kept"]
    note = (
        f"The model kept in {report['model']} is seed {kept['seed']}'s, epoch {kept['epoch']} "
        f"(best {job.selection} {job.main_metric})."
    )
    title = f"{report['task']} from {report['init']} ({len(report['runs'])} seeds)"
    write_atomic(folder / "results.md", _table(report["summary"], title, note))


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
        task_name: a task of `electra_tf.datasets.tasks.TASKS`.
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
    # A SQuAD run folder of the former span kind is refused, not resumed into this kind.
    request = {"kind": task.kind} if task.source == "squad" else None
    report = finetune(task, init, splits, config, output_dir, progress=progress, request=request)
    report["skipped"] = dict(read.skipped)
    if read.skipped_ids:
        report["skipped_ids"] = sorted(read.skipped_ids)
    if output_dir is not None:
        if data_dir is not None and not tfds:
            report["submission"] = _glue_submission(task, output_dir, data_dir, progress)
        write_atomic(Path(output_dir) / "results.json", json.dumps(report, indent=2) + "\n")
    return report


def _glue_submission(task: Task, output_dir, data_dir, progress) -> list[str]:
    """The kept model's GLUE test predictions, in the GLUE server's files (if test files exist)."""
    from electra_tf.finetuning.glue_submission import SUBMISSION_FILES, write_glue_submission
    from electra_tf.tasks.model_folder import load_finetuned

    stems = SUBMISSION_FILES.get(task.name, {})
    if not any((Path(data_dir) / f"{stem}.tsv").exists() for stem in stems):
        return []
    model, _ = load_finetuned(output_dir)
    written = write_glue_submission(task, model, data_dir, Path(output_dir) / "submission")
    if progress and written:
        progress(f"[finetune] GLUE submission files: {', '.join(map(str, written))}")
    return [str(path) for path in written]
