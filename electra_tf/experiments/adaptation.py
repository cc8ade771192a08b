"""Objectives compared for adapting a released encoder at equal compute, judged by the probe.

The paper's claim is sample efficiency: a discriminator that learns from every token
beats a masked LM that learns from 15% of them, at equal pre-training FLOPs. From
scratch on 2 CPU cores nothing gets far enough to show it. Continued pre-training of a
real encoder does: `adaptation_experiment` starts every run from the same encoder
(all-MiniLM-L6-v2 by default), continues it on the same packed corpus with each
objective for the same Appendix-E training FLOPs (checkpointed where each run crosses
each budget), over several seeds of the adaptation (masking, sampling, data order and
the fresh heads), and probes every checkpoint on the movie-review task
(`electra_tf.probe`). It writes a table (probe accuracy mean and spread per
objective and budget, beside the unadapted encoder, bag-of-words and random init) and
a plot of probe accuracy against pre-training FLOPs, one line per objective.

With `finetune_seeds` N, a second view fine-tunes at the largest budget: adaptation
seeds 1..N of each objective, each fine-tuned once (fine-tuning seed = adaptation
seed, so the spread holds both sources of noise), and the unadapted encoder N times.

The experiment is a set of cells, one per (objective, seed): each is a checkpointed
run folder and probe files, so re-running the command resumes a cell that was
interrupted and skips the finished ones; each cell records its wall time.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError, load_recipe
from electra_tf.experiments.report import (
    adaptation_plot,
    adaptation_table,
    finetuned_table,
)

__all__ = ["AdaptationOptions", "adaptation_experiment", "ordering"]

#: The objectives the paper compares for efficiency (Section 3.5), as run here.
ADAPTATION_OBJECTIVES = ("electra", "bert_mlm", "replace_mlm", "all_tokens_mlm", "electra_15")


@dataclasses.dataclass
class AdaptationOptions:
    """What the adaptation experiment compares.

    Attributes:
        data_dir: a prepare folder packed with the starting encoder's vocabulary.
        output_dir: where cells, tables and the plot go.
        start: the starting encoder (anything `pretrain --init` reads).
        objectives: objective names (`OBJECTIVE_PRESETS`).
        budgets: training-FLOP budgets (Appendix E); each run goes to the largest.
        seeds: adaptation seeds per objective (`train.seed` = 1 .. seeds).
        probe_task: the classification task probed.
        movie_file, fetch_dir: where the probe task's data is (see `task_splits`).
        recipe: the pre-training recipe (default `adapt`).
        overrides: extra `section.key=value` overrides for every run.
        random_seeds: random initialisations probed for the reference row.
        warmup_fraction: warmup as a share of each run's steps.
        finetune_seeds: the second view's fine-tunings per objective (0: none).
        finetune_overrides: fine-tuning `key=value` overrides for that view.
    """

    data_dir: str
    output_dir: str
    start: str
    objectives: tuple = ADAPTATION_OBJECTIVES
    budgets: tuple = ()
    seeds: int = 3
    probe_task: str = "movie_reviews"
    movie_file: str = ""
    fetch_dir: str = ""
    recipe: str = "adapt"
    overrides: tuple = ()
    random_seeds: int = 3
    warmup_fraction: float = 0.1
    finetune_seeds: int = 0
    finetune_overrides: tuple = ()


def _config(options: AdaptationOptions, objective: str, seed: int, warm):
    from electra_tf.experiments.efficiency import OBJECTIVE_PRESETS
    from electra_tf.pretraining.run import config_for_data
    from electra_tf.pretraining.warm_start import config_for_warm_start

    presets = [p for p in OBJECTIVE_PRESETS[objective] if not p.startswith("model.")]
    config = load_recipe(options.recipe).override(
        f"data.train_files={options.data_dir}", *presets, f"train.seed={seed}", *options.overrides
    )
    return config_for_warm_start(config_for_data(config), warm)


def _probe(path: Path, build, splits, task, log) -> dict:
    """The probe report stored at `path`, made (and stored) first if need be."""
    from electra_tf.probe import probe_report

    if path.exists():
        return json.loads(path.read_text())
    started = time.perf_counter()
    init = build()
    report = probe_report(init, task, splits, random_seeds=0, log=log)
    report["seconds"] = round(time.perf_counter() - started, 1)
    path.write_text(json.dumps(report, indent=2) + "\n")
    return report


def _checkpoint_init(checkpoint: Path, label: str):
    """The discriminator's encoder of a pre-training checkpoint, as an `Initialization`."""
    import dataclasses

    from electra_tf.tasks.initialization import load_initialization

    return dataclasses.replace(load_initialization(str(checkpoint)), source=label)


def _checkpoint(options, objective: str, seed: int, step: int) -> Path:
    folder = Path(options.output_dir) / objective / f"seed-{seed}"
    return folder / "run" / "checkpoints" / f"step-{step:08d}"


def _cell(options, objective, seed, warm, splits, task, log) -> list[dict]:
    """One (objective, seed): its run to the largest budget, and a probe at every budget."""
    from electra_tf.experiments.efficiency import budget_schedule
    from electra_tf.pretraining.run import run_pretraining

    folder = Path(options.output_dir) / objective / f"seed-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    config = _config(options, objective, seed, warm)
    config, per_step, steps = budget_schedule(config, options.budgets, options.warmup_fraction)
    total = max(steps)
    record_path = folder / "cell.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    if record.get("trained_to") != total:
        log(f"[adaptation] {objective} seed {seed}: {total} steps ({per_step:.3e} FLOPs each)")
        started = time.perf_counter()
        run_pretraining(config, folder / "run", verbose=0, save_steps=steps, warm_start=warm)
        record["train_seconds"] = record.get("train_seconds", 0.0) + (time.perf_counter() - started)
        record["trained_to"] = total
        record_path.write_text(json.dumps(record, indent=2) + "\n")
    rows = []
    for budget, step in zip(options.budgets, steps, strict=True):
        checkpoint = _checkpoint(options, objective, seed, step)

        def build(checkpoint=checkpoint, step=step):
            return _checkpoint_init(checkpoint, f"{objective} seed {seed} step {step}")

        report = _probe(folder / f"probe-step-{step}.json", build, splits, task, log)
        row = report["rows"][-1]
        rows.append(
            {
                "objective": objective,
                "seed": seed,
                "budget": budget,
                "steps": step,
                "train_flops": step * per_step,
                "dev_accuracy": row["dev_accuracy"],
                "test_accuracy": row.get("test_accuracy"),
                "bag_of_words": report["rows"][0],
                "train_seconds": record["train_seconds"],
                "probe_seconds": report.get("seconds"),
            }
        )
    return rows


def _finetune_once(path: Path, build, task, splits, config, seed: int, log) -> dict:
    """One fine-tuning's results (stored in `path`/results.json, made first if need be)."""
    from electra_tf.finetuning.run import finetune

    results = path / "results.json"
    if not results.exists():
        init = build()
        log(f"[adaptation] fine-tuning {init.source} (seed {seed})")
        finetune(task, init, splits, config.override(f"seed={seed}", "seeds=1"), path, None)
    report = json.loads(results.read_text())
    run = report["runs"][0]
    return {"dev": run["dev"]["accuracy"], "test": run.get("test", {}).get("accuracy")}


def _finetune_view(options, rows, splits, task, log) -> list[dict]:
    """The second view: fine-tunings at the largest budget (see the module), summarized."""
    from electra_tf.tasks.config import load_finetune_recipe
    from electra_tf.tasks.initialization import load_initialization

    config = load_finetune_recipe(task.name).override(*options.finetune_overrides)
    budget = max(options.budgets)
    jobs = []  # (row name, seed, folder, build)
    for seed in range(1, options.finetune_seeds + 1):
        folder = Path(options.output_dir) / "start-finetune" / f"seed-{seed}"
        jobs.append(("unadapted start", seed, folder, lambda: load_initialization(options.start)))
    for objective in options.objectives:
        for seed in range(1, options.finetune_seeds + 1):
            step = next(
                r["steps"]
                for r in rows
                if r["objective"] == objective and r["seed"] == seed and r["budget"] == budget
            )
            checkpoint = _checkpoint(options, objective, seed, step)
            label = f"{objective} seed {seed}"
            folder = checkpoint.parent.parent.parent / f"finetune-step-{step}"
            build = lambda c=checkpoint, label=label: _checkpoint_init(c, label)  # noqa: E731
            jobs.append((objective, seed, folder, build))
    results = {}
    for name, seed, folder, build in jobs:
        results.setdefault(name, []).append(
            _finetune_once(folder, build, task, splits, config, seed, log)
        )
    summary = []
    for name, runs in results.items():
        test_mean, test_std = _spread([r["test"] for r in runs])
        dev_mean, dev_std = _spread([r["dev"] for r in runs])
        summary.append(
            {
                "objective": name,
                "budget": 0.0 if name == "unadapted start" else budget,
                "seeds": len(runs),
                "test_mean": test_mean,
                "test_std": test_std,
                "dev_mean": dev_mean,
                "dev_std": dev_std,
                "runs": runs,
            }
        )
    return summary


def _spread(values) -> tuple[float, float]:
    """Mean and sample std (0 for one value)."""
    values = np.asarray(values, np.float64)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def _summary(rows, objectives, budgets) -> list[dict]:
    summary = []
    for objective in objectives:
        for budget in budgets:
            cell = [r for r in rows if r["objective"] == objective and r["budget"] == budget]
            if not cell:
                continue
            test_mean, test_std = _spread([r["test_accuracy"] for r in cell])
            dev_mean, dev_std = _spread([r["dev_accuracy"] for r in cell])
            summary.append(
                {
                    "objective": objective,
                    "budget": budget,
                    "steps": cell[0]["steps"],
                    "train_flops": cell[0]["train_flops"],
                    "seeds": len(cell),
                    "test_mean": test_mean,
                    "test_std": test_std,
                    "dev_mean": dev_mean,
                    "dev_std": dev_std,
                    "minutes_per_seed": float(np.mean([r["train_seconds"] for r in cell]) / 60.0),
                }
            )
    return summary


def ordering(summary, budget, better: str = "electra") -> dict:
    """Per other objective at `budget`: whether `better`'s mean probe test accuracy beats
    it by more than the larger of the two seed spreads (True), loses to it by more
    (False), or neither (None: within the spread)."""
    at = {row["objective"]: row for row in summary if row["budget"] == budget}
    if better not in at:
        return {}
    verdict = {}
    for name, row in at.items():
        if name == better:
            continue
        margin = at[better]["test_mean"] - row["test_mean"]
        spread = max(at[better]["test_std"], row["test_std"])
        verdict[name] = True if margin > spread else False if -margin > spread else None
    return verdict


def adaptation_experiment(options: AdaptationOptions, log=print) -> dict:
    """Runs (or resumes) every cell, then writes adaptation.md/.json/.png (see the module)."""
    from electra_tf.datasets.sources import task_splits
    from electra_tf.datasets.tasks import get_task
    from electra_tf.experiments.efficiency import OBJECTIVE_PRESETS
    from electra_tf.probe import probe_report
    from electra_tf.tasks.initialization import load_initialization, load_warm_start

    unknown = [o for o in options.objectives if o not in OBJECTIVE_PRESETS]
    if unknown:
        raise ConfigError(
            f"Unknown objective {unknown[0]!r}: choose from {', '.join(OBJECTIVE_PRESETS)}."
        )
    if not options.budgets:
        raise ConfigError("Give at least one FLOP budget (--budgets 4.5e13,9.1e13).")
    options = dataclasses.replace(options, budgets=tuple(sorted(float(b) for b in options.budgets)))
    started = time.perf_counter()
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = get_task(options.probe_task)
    splits = task_splits(
        task, movie_file=options.movie_file or None, fetch_dir=options.fetch_dir or None
    )
    warm = load_warm_start(options.start)
    start_path = out / "start-probe.json"
    if not start_path.exists():
        log("[adaptation] probing the unadapted encoder beside bag of words and random init")
        report = probe_report(
            load_initialization(options.start), task, splits,
            random_seeds=options.random_seeds, log=log,
        )  # fmt: skip
        start_path.write_text(json.dumps(report, indent=2) + "\n")
    start = json.loads(start_path.read_text())
    reference = {
        "start_test": start["rows"][-1]["test_accuracy"],
        "start_dev": start["rows"][-1]["dev_accuracy"],
        "bow_test": start["rows"][0]["test_accuracy"],
        "random_mean": start["random"]["mean"],
        "random_std": start["random"]["std"],
        "random_seeds": start["random"]["seeds"],
    }
    rows = []
    for seed in range(1, options.seeds + 1):  # seed-major: every objective gets seed 1 first
        for objective in options.objectives:
            rows += _cell(options, objective, seed, warm, splits, task, log)
    summary = _summary(rows, options.objectives, options.budgets)
    verdicts = {f"{b:.3e}": ordering(summary, b) for b in options.budgets}
    finetuned = []
    if options.finetune_seeds:
        finetuned = _finetune_view(options, rows, splits, task, log)
    result = {
        "experiment": "adaptation",
        "options": dataclasses.asdict(options),
        "reference": reference,
        "rows": rows,
        "summary": summary,
        "electra_beats": verdicts,
        "finetuned": finetuned,
        "electra_beats_finetuned": ordering(finetuned, max(options.budgets)) if finetuned else {},
        "seconds": time.perf_counter() - started,
    }
    title = f"Adapting {Path(options.start).name} at equal FLOPs ({task.name} probe)"
    (out / "adaptation.json").write_text(json.dumps(result, indent=2) + "\n")
    table = f"# {title}\n\n{adaptation_table(summary, reference)}"
    if finetuned:
        overrides = ", ".join(options.finetune_overrides) or "the task's recipe"
        table += finetuned_table(finetuned, max(options.budgets), overrides)
    (out / "adaptation.md").write_text(table)
    adaptation_plot(summary, reference, out / "adaptation.png", title)
    result["files"] = [str(out / f) for f in ("adaptation.md", "adaptation.json", "adaptation.png")]
    return result
