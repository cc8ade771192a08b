"""Does continued pre-training help the fine-tuned model? Corpus x objective, paired seeds.

`corpora_experiment` continues one released encoder (all-MiniLM-L6-v2 by default) on
each adaptation corpus (`electra_tf.datasets.adaptation_text`: domain, task, both) with each
objective (ELECTRA, BERT's masked LM) for the same Appendix-E training FLOPs (the main
job's budget: `steps` ELECTRA steps of the `adapt` recipe, times each of
`budget_multiples`), then fine-tunes every adapted encoder and the unadapted one with the
same fine-tuning seeds 1..N on the same labelled training snippets (the epoch kept is
chosen on dev; test is scored once per fine-tuning and chooses nothing).

The decision rule (declared before the runs, docs/results/adaptation-corpora.md): for a
cell, d_i = its accuracy minus the unadapted encoder's with fine-tuning seed i; the cell
**helps** when mean(d) > 2 SE(d) on dev and on test, **hurts** when mean(d) < -2 SE(d) on
both, and is **not resolved** otherwise (SE = sample std / sqrt(n)). The setting the main
job adopts is the ELECTRA cell with the highest dev mean (dev only).

Every cell resumes: its pre-training run is checkpointed and each fine-tuning writes
`results.json`, so re-running the command skips what is finished.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from pathlib import Path

import numpy as np

from electra_tf.datasets.adaptation_text import ADAPTATION_CORPORA
from electra_tf.experiments.adaptation import _checkpoint_init, _finetune_once, _spread

__all__ = ["CorporaOptions", "corpora_experiment", "paired_verdict"]


@dataclasses.dataclass
class CorporaOptions:
    """What the experiment compares (see the module docstring).

    Attributes:
        output_dir: where cells, the table, the JSON and the plot go.
        cache_dir: downloads and packed corpora (the demo's `data/`).
        start: the starting encoder ("" fetches all-MiniLM-L6-v2 into `cache_dir`).
        corpora, objectives: the grid.
        steps: ELECTRA steps of the `adapt` recipe that make one budget (the main job's 300).
        budget_multiples: budgets as multiples of that one.
        batch_size, sequence_length: the pre-training batch.
        overrides: pre-training `section.key=value` overrides for every run.
        finetune_seeds: fine-tuning seeds 1..N, the same for every encoder.
        finetune_train_examples: a fixed, seeded subset of the task's training split
            (0: all of it); dev and test are whole.
        finetune_overrides: fine-tuning `key=value` overrides.
    """

    output_dir: str
    cache_dir: str = "data"
    start: str = ""
    corpora: tuple = ADAPTATION_CORPORA
    objectives: tuple = ("electra", "bert_mlm")
    steps: int = 300
    budget_multiples: tuple = (1.0,)
    batch_size: int = 32
    sequence_length: int = 64
    overrides: tuple = ()
    finetune_seeds: int = 5
    finetune_train_examples: int = 1000
    finetune_overrides: tuple = ()
    task: str = "movie_reviews"


def paired_verdict(cell: list[float], base: list[float]) -> dict:
    """Paired difference of two equally seeded lists: mean, SE and the declared rule's verdict.

    >>> paired_verdict([0.80, 0.82, 0.81], [0.78, 0.80, 0.79])["verdict"]
    'helps'
    >>> paired_verdict([0.80, 0.78], [0.79, 0.79])["verdict"]
    'not resolved'
    """
    d = np.asarray(cell, np.float64) - np.asarray(base, np.float64)
    mean = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else float("inf")
    verdict = "helps" if mean > 2 * se else "hurts" if mean < -2 * se else "not resolved"
    return {"mean": mean, "se": se, "n": int(len(d)), "verdict": verdict}


def _both(dev: dict, test: dict) -> str:
    if dev["verdict"] == test["verdict"] and dev["verdict"] != "not resolved":
        return dev["verdict"]
    return "not resolved"


@functools.cache
def _frozen_recipe(name: str):
    """The recipe as first read in this process: an edit to its file while the experiment
    runs must not reach the cells that start later (it once did: three cells of the
    2026-11-25 grid ran at the edited learning rate)."""
    from electra_tf.config import load_recipe

    return load_recipe(name)


def _pretrain_config(options, data, objective: str, budget: float, warm):
    from electra_tf.experiments.efficiency import OBJECTIVE_PRESETS, budget_schedule
    from electra_tf.pretraining.run import config_for_data
    from electra_tf.pretraining.warm_start import config_for_warm_start

    presets = [p for p in OBJECTIVE_PRESETS[objective] if not p.startswith("model.")]
    config = _frozen_recipe("adapt").override(
        f"data.train_files={data}",
        f"train.batch_size={options.batch_size}",
        f"data.sequence_length={options.sequence_length}",
        *presets,
        *options.overrides,
    )
    config = config_for_warm_start(config_for_data(config) if data else config, warm)
    if budget <= 0:
        return config
    config, _, _ = budget_schedule(config, [budget], 0.1)
    return config


def _budget(options, warm, convention: str = "paper") -> float:
    """The main job's training FLOPs: `steps` ELECTRA steps of the adapt recipe."""
    from electra_tf.pretraining.objectives import train_flops_per_step

    config = _pretrain_config(options, "", "electra", 0.0, warm)
    return options.steps * train_flops_per_step(config, convention)


def step_counts(options, objective: str, warm, multiple: float) -> dict:
    """Steps of `objective` that `multiple` main-job budgets buy, by each FLOP convention
    (the runs use the paper's; the sparse count is what the other convention would give)."""
    from electra_tf.pretraining.flops import CONVENTIONS
    from electra_tf.pretraining.objectives import train_flops_per_step

    config = _pretrain_config(options, "", objective, 0.0, warm)
    return {
        name: max(1, math.ceil(multiple * _budget(options, warm, name)
                               / train_flops_per_step(config, name)))
        for name in CONVENTIONS
    }  # fmt: skip


def _adapt(options, cell: Path, data, objective, budget, warm, log) -> dict:
    """The cell's continued pre-training (resumed or skipped) and its held-out figures."""
    from electra_tf.data.tfrecords import Manifest
    from electra_tf.pretraining.evaluation import held_out_report
    from electra_tf.pretraining.run import run_pretraining

    record_path = cell / "cell.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    config = _pretrain_config(options, data.train, objective, budget, warm)
    steps = config.train.num_steps
    if record.get("trained_to") != steps:
        log(f"[corpora] {cell.name}: {steps} steps of {objective} on the {data.kind} corpus")
        started = time.perf_counter()
        result = run_pretraining(config, cell / "run", verbose=0, warm_start=warm)
        held = Manifest.read(data.held_out)
        special = set(held.special_ids.values())
        train_files = Manifest.read(data.train).files
        record = {
            "trained_to": steps,
            "learning_rate": config.train.learning_rate,
            "train_seconds": record.get("train_seconds", 0.0) + time.perf_counter() - started,
            "checkpoint": str(result.checkpoint),
            "held_out": held_out_report(
                result.model, held.files, held.counts, special, baseline_files=train_files
            ),
            "steps": step_counts(options, objective, warm, budget / _budget(options, warm)),
            "corpus": data.report,
        }
        record_path.write_text(json.dumps(record, indent=2) + "\n")
    return record


def _subset(splits: dict, count: int) -> dict:
    if not count or count >= len(splits["train"]):
        return splits
    chosen = sorted(np.random.default_rng(0).permutation(len(splits["train"]))[:count].tolist())
    return {**splits, "train": [splits["train"][i] for i in chosen]}


def _finetunings(options, folder: Path, build, task, splits, config, log) -> list[dict]:
    return [
        _finetune_once(folder / f"finetune-seed-{seed}", build, task, splits, config, seed, log)
        for seed in range(1, options.finetune_seeds + 1)
    ]


@dataclasses.dataclass
class _Setting:
    """What every cell shares: the data, the encoder and the fine-tuning."""

    snippets: dict
    start: str
    warm: object
    task: object
    splits: dict
    finetune_config: object


def _setting(options: CorporaOptions) -> _Setting:
    from electra_tf.config import ConfigError
    from electra_tf.data.public import fetch_minilm, fetch_snippets
    from electra_tf.datasets.readers import movie_review_split, read_movie_reviews
    from electra_tf.datasets.tasks import get_task
    from electra_tf.experiments.efficiency import OBJECTIVE_PRESETS
    from electra_tf.tasks.config import load_finetune_recipe
    from electra_tf.tasks.initialization import load_warm_start

    unknown = [o for o in options.objectives if o not in OBJECTIVE_PRESETS]
    if unknown:
        raise ConfigError(
            f"Unknown objective {unknown[0]!r}: choose from {', '.join(OBJECTIVE_PRESETS)}."
        )
    cache = Path(options.cache_dir)
    snippets = fetch_snippets(cache / "corpora")
    start = options.start or str(fetch_minilm(cache / "models"))
    task = get_task(options.task)
    splits = movie_review_split(read_movie_reviews(snippets[task.name]), task)
    return _Setting(
        snippets,
        start,
        load_warm_start(start),
        task,
        _subset(splits, options.finetune_train_examples),
        load_finetune_recipe(task.name).override(*options.finetune_overrides),
    )


def corpora_experiment(options: CorporaOptions, log=print) -> dict:
    """Runs (or resumes) every cell, then writes adaptation-corpora.md/.json/.png."""
    from electra_tf.datasets.adaptation_text import adaptation_corpus
    from electra_tf.tasks.initialization import load_initialization

    started = time.perf_counter()
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = _setting(options)
    warm, task, splits = s.warm, s.task, s.splits
    unadapted = _finetunings(
        options, out / "unadapted", lambda: load_initialization(s.start), task, splits,
        s.finetune_config, log,
    )  # fmt: skip
    cells = []
    for multiple in options.budget_multiples:
        budget = _budget(options, warm) * multiple
        for kind in options.corpora:
            data = adaptation_corpus(
                kind, s.snippets, options.cache_dir, vocab_file=warm.vocab_file,
                lower_case=warm.lower_case, sequence_length=options.sequence_length,
                probe_task=task.name, log=log,
            )  # fmt: skip
            for objective in options.objectives:
                name = f"{kind}-{objective}-x{multiple:g}"
                record = _adapt(options, out / name, data, objective, budget, warm, log)
                label = f"{objective} on {kind} (x{multiple:g})"
                build = lambda c=record["checkpoint"], label=label: _checkpoint_init(  # noqa: E731
                    Path(c), label
                )
                runs = _finetunings(options, out / name, build, task, splits, s.finetune_config,
                                    log)  # fmt: skip
                cells.append(_cell_row(name, kind, objective, multiple, budget, record, runs,
                                       unadapted))  # fmt: skip
    result = {
        "experiment": "adaptation-corpora",
        "options": dataclasses.asdict(options),
        "start": s.start,
        "train_examples": len(splits["train"]),
        "unadapted": _summary_row(unadapted),
        "cells": cells,
        "best_electra_on_dev": _best_on_dev(cells),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return _write(result, out)


def _best_on_dev(cells) -> str | None:
    """The ELECTRA cell with the highest fine-tuned dev mean (what the demo adopts)."""
    electra = [c for c in cells if c["objective"] == "electra"]
    return max(electra, key=lambda c: c["dev_mean"])["name"] if electra else None


def _write(result: dict, out: Path) -> dict:
    from electra_tf.experiments.report import corpora_plot, corpora_table

    (out / "adaptation-corpora.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "adaptation-corpora.md").write_text(corpora_table(result))
    corpora_plot(result, out / "adaptation-corpora.png")
    result["files"] = [str(out / f"adaptation-corpora.{ext}") for ext in ("md", "json", "png")]
    return result


def _summary_row(runs: list[dict]) -> dict:
    test_mean, test_std = _spread([r["test"] for r in runs])
    dev_mean, dev_std = _spread([r["dev"] for r in runs])
    return {
        "dev": [r["dev"] for r in runs],
        "test": [r["test"] for r in runs],
        "dev_mean": dev_mean,
        "dev_std": dev_std,
        "test_mean": test_mean,
        "test_std": test_std,
    }


def _cell_row(name, kind, objective, multiple, budget, record, runs, unadapted) -> dict:
    row = {
        "name": name,
        "corpus": kind,
        "objective": objective,
        "budget_multiple": multiple,
        "train_flops": budget,
        "steps": record["steps"],
        "train_minutes": round(record["train_seconds"] / 60, 1),
        "learning_rate": record.get("learning_rate"),
        "held_out": record["held_out"],
        **_summary_row(runs),
    }
    dev = paired_verdict(row["dev"], [r["dev"] for r in unadapted])
    test = paired_verdict(row["test"], [r["test"] for r in unadapted])
    return {**row, "paired_dev": dev, "paired_test": test, "verdict": _both(dev, test)}
