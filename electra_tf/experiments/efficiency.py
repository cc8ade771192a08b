"""Pre-training objectives compared at equal compute, judged by a downstream task.

`efficiency_experiment` pre-trains each objective on the same packed corpus
with the same recipe, for the same Appendix-E training FLOPs (each run's
step count is the largest budget divided by its objective's FLOPs per step,
its learning-rate schedule ending there), checkpoints each run where it
crosses every smaller budget, fine-tunes every checkpoint on the
movie-review task over several seeds, and writes a table (median and
spread of the dev metric) and a plot (metric against pre-training FLOPs, one
line per objective). `generator_size_experiment` does the same over
ELECTRA generator sizes at one budget.

The paper's claim (Section 3.2): at equal compute, ELECTRA's discriminator
fine-tunes better than a BERT masked LM. `claim_holds` applies the issue's
test: ELECTRA's median beats BERT's by more than the larger of the two
seeds' standard deviations.

With `measure="probe"` each checkpoint is judged by the linear probe
(`electra_tf.probe`) instead of fine-tuning: the probe's dev accuracy
is the row's figure, and the same architecture at random initialisation is
probed over `random_seeds` seeds as the reference; the claim then needs a
margin larger than that reference's standard deviation too. The probe is far
cheaper and far less noisy than fine-tuning at this scale.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError, load_recipe
from electra_tf.experiments.report import (
    efficiency_plot,
    efficiency_table,
    generator_size_plot,
    random_init_line,
    write_result,
)
from electra_tf.pretraining.objectives import OBJECTIVES, train_flops_per_step

__all__ = [
    "OBJECTIVE_PRESETS",
    "ExperimentOptions",
    "efficiency_experiment",
    "generator_size_experiment",
    "claim_holds",
    "budget_schedule",
    "steps_for_budgets",
]

#: Config overrides that turn the recipe into each objective, as the paper ran them.
OBJECTIVE_PRESETS = {
    "electra": ("objective.name=electra",),
    "bert_mlm": (
        "objective.name=bert_mlm",
        "objective.mask_token_rate=0.8",
        "objective.random_token_rate=0.1",
    ),
    "electra_15": ("objective.name=electra_15",),
    "replace_mlm": ("objective.name=replace_mlm",),
    "all_tokens_mlm": ("objective.name=all_tokens_mlm",),
    "unigram": ("objective.name=unigram",),
    "two_stage": (
        "objective.name=two_stage",
        "model.generator_size_fraction=1.0",
        "model.weight_tying=none",
    ),
    "adversarial": ("objective.name=adversarial",),
}
assert set(OBJECTIVE_PRESETS) == set(OBJECTIVES)


@dataclasses.dataclass
class ExperimentOptions:
    """What every experiment shares.

    Attributes:
        data_dir: a folder written by `electra-tf prepare` (with unigram counts).
        output_dir: where runs, results.json, results.md and the PNG go.
        movie_file: the movie-review snippets file; "" downloads it into `fetch_dir`.
        recipe: the pre-training recipe (name or TOML path).
        overrides: extra pre-training `section.key=value` overrides for every run.
        seeds: fine-tuning seeds per checkpoint.
        task: `movie_reviews` (accuracy) or `movie_ratings` (Spearman).
        finetune_overrides: fine-tuning config overrides (`epochs=2`, ...).
        warmup_fraction: pre-training warmup as a share of each run's steps.
        measure: `finetune` (seeds of fine-tuning) or `probe` (the linear probe).
        random_seeds: probe only: random initialisations probed as the reference.
    """

    data_dir: str
    output_dir: str
    movie_file: str
    recipe: str = "tiny"
    overrides: tuple = ()
    seeds: int = 5
    task: str = "movie_reviews"
    finetune_overrides: tuple = ()
    warmup_fraction: float = 0.1
    fetch_dir: str = ""
    measure: str = "finetune"
    random_seeds: int = 3

    def __post_init__(self):
        if not self.movie_file and not self.fetch_dir:
            raise ConfigError("Give --movie-file (the snippets file) or --fetch.")
        if self.measure not in ("finetune", "probe"):
            raise ConfigError(f"--measure must be finetune or probe, got {self.measure!r}.")
        if self.measure == "probe" and self.task != "movie_reviews":
            raise ConfigError(
                f"--measure probe needs a classification task; {self.task!r} is a regression: "
                "use --task movie_reviews or --measure finetune."
            )

    def splits(self, task):
        """The task's splits of the movie-review snippets (downloaded first if need be)."""
        from electra_tf.datasets.sources import task_splits

        return task_splits(
            task, movie_file=self.movie_file or None, fetch_dir=self.fetch_dir or None
        )


def _metric(task_name: str, measure: str = "finetune") -> str:
    if measure == "probe":
        return "probe dev/accuracy"
    return "dev/spearman" if task_name == "movie_ratings" else "dev/accuracy"


def _probe_stats(init, task, splits, options, reference: dict) -> dict:
    """The probe's figures for one checkpoint in the row format of fine-tuning's summary.

    The first call also probes the architecture at random initialisation and keeps
    that in `reference["random"]` (mean, std and seeds of dev accuracy).
    """
    from electra_tf.probe import probe_report

    seeds = 0 if "random" in reference else options.random_seeds
    report = probe_report(init, task, splits, random_seeds=seeds)
    if seeds:
        dev = [r["dev_accuracy"] for r in report["rows"] if r["encoder"].startswith("random")]
        reference["random"] = {
            "mean": sum(dev) / len(dev),
            "std": float(np.std(dev, ddof=1)) if len(dev) > 1 else 0.0,
            "seeds": len(dev),
        }
    row = report["rows"][-1]
    value = row["dev_accuracy"]
    return {
        "median": value, "mean": value, "std": 0.0, "min": value, "max": value, "n": 1,
        "test": row.get("test_accuracy"), "seconds": report["seconds"],
    }  # fmt: skip


def _pretrain_config(options: ExperimentOptions, extra=()):
    from electra_tf.pretraining.run import config_for_data

    config = load_recipe(options.recipe).override(
        f"data.train_files={options.data_dir}", *options.overrides, *extra
    )
    return config_for_data(config)


def steps_for_budgets(config, budgets) -> tuple[float, list[int]]:
    """(training FLOPs per step, the step at which the run crosses each budget)."""
    per_step = train_flops_per_step(config)
    return per_step, [max(1, math.ceil(b / per_step)) for b in budgets]


def budget_schedule(config, budgets, warmup_fraction: float):
    """`config` run to the largest budget (warmup a fraction of it, then linear decay), with
    a checkpoint kept at every budget.

    Returns:
        (config, FLOPs per step, the steps of the budgets).
    """
    _, steps = steps_for_budgets(config, budgets)
    total = max(steps)
    config = config.override(
        f"train.num_steps={total}",
        f"train.warmup_steps={int(warmup_fraction * total)}",
        f"train.checkpoint_every={total}",
        f"train.keep_checkpoints={len(steps) + 1}",
    )
    # Two-stage switches at half of its own run (its FLOPs per step depend on num_steps).
    per_step, steps = steps_for_budgets(config, budgets)
    return config, per_step, steps


def _pretrain_and_finetune(
    name, config, budgets, options, folder: Path, log, reference=None
) -> list[dict]:
    """One pre-training run checkpointed at each budget, each checkpoint fine-tuned (or probed:
    `options.measure`; `reference` then collects the random-init probe, see `_probe_stats`)."""
    from electra_tf.datasets.tasks import get_task
    from electra_tf.finetuning.run import finetune
    from electra_tf.pretraining.run import run_pretraining
    from electra_tf.tasks.config import load_finetune_recipe
    from electra_tf.tasks.initialization import load_initialization

    config, per_step, steps = budget_schedule(config, budgets, options.warmup_fraction)
    sparse = train_flops_per_step(config, "sparse")
    log(f"[experiment] {name}: {per_step:.3e} FLOPs/step, checkpoints at steps {steps}")
    started = time.perf_counter()
    run = run_pretraining(config, folder / "pretrain", verbose=0, save_steps=steps)
    pretrain_seconds = time.perf_counter() - started
    task = get_task(options.task)
    splits = options.splits(task)
    finetune_config = load_finetune_recipe(task.name).override(
        f"seeds={options.seeds}", *options.finetune_overrides
    )
    rows = []
    for budget, step in zip(budgets, steps, strict=True):
        checkpoint = folder / "pretrain" / "checkpoints" / f"step-{step:08d}"
        init = load_initialization(str(checkpoint))
        if options.measure == "probe":
            kept = {} if reference is None else reference
            stats = _probe_stats(init, task, splits, options, kept)
            report = {"seconds": stats["seconds"]}
        else:
            report = finetune(
                task, init, splits, finetune_config, folder / f"finetune-step-{step}", progress=None
            )
            stats = report["summary"][_metric(task.name)]
        rows.append(
            {
                "objective": name,
                "budget": budget,
                "steps": step,
                "steps_sparse": max(1, math.ceil(budget / sparse)),
                "train_flops": step * per_step,
                "median": stats["median"],
                "mean": stats["mean"],
                "std": stats["std"],
                "min": stats["min"],
                "max": stats["max"],
                "seeds": stats["n"],
                **({"test": stats["test"]} if "test" in stats else {}),
                "pretrain_logs": run.logs if step == run.step else {},
                "pretrain_seconds": pretrain_seconds,
                "finetune_seconds": report["seconds"],
            }
        )
        log(
            f"[experiment] {name} @ {budget:.2e} FLOPs (step {step}): "
            f"{_metric(task.name, options.measure)} median {stats['median']:.4f} "
            f"(std {stats['std']:.4f})"
        )
    return rows


def claim_holds(rows, budget, better="electra", worse="bert_mlm", spread=0.0) -> bool | None:
    """Whether `better`'s median beats `worse`'s by more than the larger seed std at `budget`
    (and by more than `spread`: the random-init probe's std when the rows are probes)."""
    at = {r["objective"]: r for r in rows if r["budget"] == budget}
    if better not in at or worse not in at:
        return None
    margin = at[better]["median"] - at[worse]["median"]
    return margin > max(at[better]["std"], at[worse]["std"], spread)


def efficiency_experiment(
    options: ExperimentOptions, objectives=("electra", "bert_mlm"), budgets=(), log=print
) -> dict:
    """Pre-trains `objectives` to equal FLOP `budgets`, fine-tunes each, writes table and plot.

    Returns:
        {"rows", "claim", "seconds", "files"}.
    """
    unknown = [o for o in objectives if o not in OBJECTIVE_PRESETS]
    if unknown:
        raise ConfigError(
            f"Unknown objective {unknown[0]!r}: choose from {', '.join(OBJECTIVE_PRESETS)}."
        )
    if not budgets:
        raise ConfigError("Give at least one FLOP budget (--budgets 2e14,4e14).")
    budgets = sorted(float(b) for b in budgets)
    started = time.perf_counter()
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, reference = [], {}
    for name in objectives:
        config = _pretrain_config(options, OBJECTIVE_PRESETS[name])
        rows += _pretrain_and_finetune(name, config, budgets, options, out / name, log, reference)
    metric = _metric(options.task, options.measure)
    spread = reference.get("random", {}).get("std", 0.0)
    claim = {f"{b:.3e}": claim_holds(rows, b, spread=spread) for b in budgets}
    result = {
        "experiment": "efficiency",
        "options": dataclasses.asdict(options),
        "metric": metric,
        "rows": rows,
        "claim_electra_beats_bert": claim,
        **({"random_init": reference["random"]} if "random" in reference else {}),
        "seconds": time.perf_counter() - started,
    }
    title = f"Objectives at equal pre-training FLOPs ({options.recipe}, {options.task})"
    write_result(
        out,
        "efficiency",
        result,
        efficiency_table(rows, metric) + random_init_line(reference),
        title,
    )
    efficiency_plot(rows, metric, out / "efficiency.png", title=title, reference=reference)
    result["files"] = [str(out / f) for f in ("efficiency.md", "efficiency.json", "efficiency.png")]
    return result


def generator_size_experiment(
    options: ExperimentOptions, fractions=(0.125, 0.25, 0.5, 1.0), budget=0.0, log=print
) -> dict:
    """ELECTRA with several generator sizes at one FLOP budget; table and plot."""
    if budget <= 0:
        raise ConfigError("Give the FLOP budget (--budget 4e14).")
    started = time.perf_counter()
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, reference = [], {}
    for fraction in fractions:
        config = _pretrain_config(
            options, ("objective.name=electra", f"model.generator_size_fraction={fraction}")
        )
        for row in _pretrain_and_finetune(
            f"generator-{fraction:g}",
            config,
            [budget],
            options,
            out / f"gen-{fraction:g}",
            log,
            reference,
        ):
            row["generator_fraction"] = fraction
            rows.append(row)
    metric = _metric(options.task, options.measure)
    best = max(rows, key=lambda r: r["median"])["generator_fraction"]
    result = {
        "experiment": "generator_size",
        "options": dataclasses.asdict(options),
        "metric": metric,
        "rows": rows,
        "best_fraction": best,
        **({"random_init": reference["random"]} if "random" in reference else {}),
        "seconds": time.perf_counter() - started,
    }
    title = f"Generator size at {budget:.2e} FLOPs ({options.recipe}, {options.task})"
    table = efficiency_table(rows, metric, "generator_fraction")
    table += random_init_line(reference)
    write_result(out, "generator_size", result, table, title)
    generator_size_plot(rows, metric, out / "generator_size.png", title, reference)
    result["files"] = [
        str(out / f) for f in ("generator_size.md", "generator_size.json", "generator_size.png")
    ]
    return result
