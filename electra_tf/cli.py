"""`electra-tf`: one entry point with subcommands.

Imports are deferred to the subcommand that needs them, so `--help` answers
without loading TensorFlow.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["main", "build_parser"]


def _prepare_environment() -> None:
    # oneDNN's fp32 matmuls are 20-40% faster on AVX2 CPUs than TensorFlow's default here;
    # it must be set before TensorFlow is imported. A user's own setting wins.
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _add_config_flags(parser: argparse.ArgumentParser, default_recipe: str) -> None:
    parser.add_argument(
        "--recipe",
        default=default_recipe,
        help=f"named recipe (tiny, small, base, large) or path to a .toml file "
        f"(default: {default_recipe})",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one config value, e.g. --set train.learning_rate=1e-4 (repeatable)",
    )


def _add_pretrain_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "pretrain",
        help="pre-train a generator and discriminator on packed examples",
        description="Pre-trains ELECTRA on packed TFRecord examples, resuming from the latest "
        "checkpoint in --output-dir if there is one.",
    )
    _add_config_flags(parser, "tiny")
    parser.add_argument(
        "--data",
        help="a folder written by `electra-tf prepare`, or comma-separated TFRecord files/globs "
        "(sets data.train_files)",
    )
    parser.add_argument("--output-dir", required=True, help="run folder: checkpoints, logs, config")
    parser.add_argument("--steps", type=int, help="total training steps (sets train.num_steps)")
    parser.add_argument("--batch-size", type=int, help="global batch size (sets train.batch_size)")
    parser.add_argument(
        "--strategy",
        choices=["default", "mirrored", "multi_worker", "tpu"],
        help="tf.distribute strategy (sets train.strategy); multi_worker reads TF_CONFIG",
    )
    parser.add_argument(
        "--cpu-devices",
        type=int,
        help="split the CPU into N logical devices, e.g. to run mirrored on one host "
        "(sets train.cpu_devices)",
    )
    parser.add_argument(
        "--xla", action="store_true", help="XLA-compile the two passes (sets train.jit_compile)"
    )
    parser.add_argument(
        "--precision",
        choices=["float32", "mixed_bfloat16", "mixed_float16"],
        help="compute precision (sets train.mixed_precision)",
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        help="stop after this many steps in this invocation (resume later)",
    )
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help="fail instead of resuming when --output-dir already holds checkpoints",
    )
    parser.add_argument(
        "--verbose", type=int, default=1, choices=[0, 1, 2], help="progress output (Keras)"
    )
    parser.set_defaults(handler=_pretrain)


def _pretrain_config(args):
    from electra_tf.config import load_recipe

    overrides = list(args.overrides)
    flags = {
        "data.train_files": args.data,
        "train.num_steps": args.steps,
        "train.batch_size": args.batch_size,
        "train.strategy": args.strategy,
        "train.cpu_devices": args.cpu_devices,
        "train.jit_compile": "true" if args.xla else None,
        "train.mixed_precision": args.precision,
    }
    overrides = [f"{key}={value}" for key, value in flags.items() if value is not None] + overrides
    return load_recipe(args.recipe).override(*overrides)


def _pretrain(args) -> int:
    config = _pretrain_config(args)
    from electra_tf.pretraining.run import config_for_data, run_pretraining

    config = config_for_data(config)
    result = run_pretraining(
        config,
        args.output_dir,
        verbose=args.verbose,
        resume=not args.no_resume,
        max_steps=args.max_steps,
    )
    print(
        json.dumps(
            {
                "step": result.step,
                "resumed_from": result.resumed_from,
                "checkpoint": str(result.checkpoint) if result.checkpoint else None,
                "seconds": round(result.seconds, 1),
                "metrics": {k: round(v, 4) for k, v in result.logs.items()},
            },
            indent=2,
        )
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="electra-tf",
        description="ELECTRA pre-training, fine-tuning and serving on TensorFlow 2 / Keras 3.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    _add_pretrain_parser(subparsers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _prepare_environment()
    from electra_tf.config import ConfigError
    from electra_tf.data.tfrecords import DataError

    try:
        return args.handler(args) or 0
    except (ConfigError, DataError) as error:
        print(f"electra-tf {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
