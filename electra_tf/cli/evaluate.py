"""`electra-tf evaluate`: held-out pre-training figures, or a linear probe of any encoder."""

from __future__ import annotations

import sys
from pathlib import Path

from electra_tf.cli.common import print_json

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="a checkpoint's held-out replaced-token AUC and MLM accuracy, or a linear probe "
        "of any encoder on a labelled task",
        description="With --data: loads a pre-training checkpoint and reports, on the given "
        "packed examples (fresh masks, seeded), the discriminator's exact replaced-token AUC "
        "and accuracy, the generator's MLM accuracy, a unigram baseline (always the most "
        "frequent token), and the AUC of a bigram-count detector (trained on the checkpoint's "
        "training files) on the same replaced tokens. With --probe TASK: freezes the encoder, "
        "fits a logistic regression on its [CLS] and mean features (regularisation chosen on "
        "dev) and reports dev and test accuracy beside bag-of-words and the same architecture "
        "at random initialisation.",
    )
    parser.add_argument(
        "--checkpoint",
        required=True,
        help="a run or one of its step-N checkpoints; with --probe, anything `finetune --init` "
        "reads (an export, a Hugging Face folder, ...)",
    )
    parser.add_argument(
        "--data",
        help="held-out TFRecord files (comma-separated, globs) or a prepare folder, e.g. "
        "data/mine/pretrain-00018.tfrecord",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="batch size (default 32)")
    parser.add_argument(
        "--probe",
        metavar="TASK",
        help="a classification task to probe (movie_reviews, or a GLUE task with --data-dir)",
    )
    parser.add_argument(
        "--random-seeds", type=int, default=3, help="--probe: random initialisations (default 3)"
    )
    parser.add_argument("--data-dir", help="--probe: the task's GLUE TSV folder")
    parser.add_argument("--movie-file", help="--probe: the movie-review snippets file")
    parser.add_argument(
        "--cache-dir",
        default="data",
        help="--probe: where the movie-review snippets are fetched and cached (default data)",
    )
    parser.add_argument("--vocab-file", help="--probe: the vocabulary, when the encoder has none")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from electra_tf.config import ConfigError

    def log(line):
        print(f"[evaluate] {line}", file=sys.stderr, flush=True)

    if not args.data and not args.probe:
        raise ConfigError("Give --data (held-out packed examples) or --probe TASK, or both.")
    report = {}
    if args.data:
        from electra_tf.pretraining.evaluation import evaluate_checkpoint

        report = evaluate_checkpoint(args.checkpoint, args.data, args.batch_size, log=log)
    if args.probe:
        from electra_tf.probe import probe_task

        report["probe"] = probe_task(
            args.probe,
            args.checkpoint,
            random_seeds=args.random_seeds,
            vocab_file=args.vocab_file,
            data_dir=args.data_dir,
            movie_file=args.movie_file,
            fetch_dir=Path(args.cache_dir) / "corpora",
            log=log,
        )
    print_json(report)
    return 0
