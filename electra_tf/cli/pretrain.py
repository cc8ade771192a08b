"""`electra-tf pretrain`: pre-train on packed examples or raw text, resuming where it stopped."""

from __future__ import annotations

import os
import sys

from electra_tf.cli.common import BACKENDS, add_config_flags, print_json, use_backend

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "pretrain",
        help="pre-train a generator and discriminator on packed examples",
        description="Pre-trains ELECTRA on packed TFRecord examples, resuming from the latest "
        "checkpoint in --output-dir if there is one.",
    )
    add_config_flags(parser, "tiny")
    parser.set_defaults(recipe=None)
    _add_source_flags(parser)
    _add_run_flags(parser)
    parser.set_defaults(handler=run)


def _add_source_flags(parser) -> None:
    """Where the run starts from and what it reads: --init, --data or --text."""
    parser.add_argument(
        "--init",
        metavar="SOURCE",
        help="continue pre-training from this encoder: a run or checkpoint, an imported "
        "folder, a Hugging Face ELECTRA or BERT folder, or an export; its sizes, vocabulary "
        "and casing are the run's (default recipe then: adapt)",
    )
    parser.add_argument(
        "--data",
        help="a folder written by `electra-tf prepare`, or comma-separated TFRecord files/globs "
        "(sets data.train_files)",
    )
    parser.add_argument(
        "--text",
        action="append",
        metavar="PATH",
        help="stream raw text files or folders instead of --data (no prepare step; "
        "tokenized and packed on the fly with --vocab-file); repeatable",
    )
    parser.add_argument(
        "--layout",
        choices=["lines", "files"],
        default="lines",
        help="--text layout: one sentence per line with blank lines between documents "
        "(lines), or one document per file (files)",
    )
    parser.add_argument(
        "--vocab-file",
        help="WordPiece vocab.txt of --text, or of --data shards without a manifest.json "
        "(default with --init: its own)",
    )
    parser.add_argument(
        "--no-lower-case",
        action="store_true",
        help="--text: keep case (cased vocabulary; default: the recorded casing, else uncased)",
    )


def _add_run_flags(parser) -> None:
    """The run folder, its length and batch, where and how it computes."""
    parser.add_argument("--output-dir", required=True, help="run folder: checkpoints, logs, config")
    parser.add_argument("--steps", type=int, help="total training steps (sets train.num_steps)")
    parser.add_argument("--batch-size", type=int, help="global batch size (sets train.batch_size)")
    parser.add_argument(
        "--strategy",
        choices=["default", "mirrored", "multi_worker", "tpu"],
        help="tf.distribute strategy (sets train.strategy); multi_worker reads TF_CONFIG; on "
        "JAX, keras.distribution splits the batch over this host's devices (mirrored), every "
        "worker's (multi_worker: TF_CONFIG or KERAS_DISTRIBUTION_*) or the TPU's (tpu)",
    )
    parser.add_argument(
        "--cpu-devices",
        type=int,
        help="split the CPU into N logical devices, e.g. to run mirrored on one host "
        "(sets train.cpu_devices; on JAX, XLA's host device count)",
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
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="Keras backend to train on (sets KERAS_BACKEND; default: KERAS_BACKEND, else "
        "tensorflow); jax trains every objective and strategy and keeps its compiled steps "
        "in ~/.cache/electra-tf/jax (JAX_COMPILATION_CACHE_DIR: elsewhere)",
    )


def flag_overrides(args) -> list[str]:
    """The `section.key=value` overrides the flags stand for, before `--set`'s own."""
    flags = {
        "data.train_files": args.data,
        "train.num_steps": args.steps,
        "train.batch_size": args.batch_size,
        "train.strategy": args.strategy,
        "train.cpu_devices": args.cpu_devices,
        "train.jit_compile": "true" if args.xla else None,
        "train.mixed_precision": args.precision,
        "data.lower_case": "false" if args.no_lower_case else None,
        "data.vocab_file": args.vocab_file if args.data else None,
    }
    return [f"{key}={value}" for key, value in flags.items() if value is not None]


def host_devices(args) -> None:
    """`--cpu-devices N` on JAX: XLA splits the CPU into N devices, which must be set
    before JAX is imported (a device count already in XLA_FLAGS wins)."""
    backend = args.backend or os.environ.get("KERAS_BACKEND")
    flags = os.environ.get("XLA_FLAGS", "")
    if backend != "jax" or not args.cpu_devices or "jax" in sys.modules:
        return
    if "xla_force_host_platform_device_count" not in flags:
        flag = f"--xla_force_host_platform_device_count={args.cpu_devices}"
        os.environ["XLA_FLAGS"] = f"{flags} {flag}".strip()


def run(args) -> int:
    use_backend(args, "pretrain", before_keras=host_devices)
    from electra_tf.config import ConfigError, load_recipe
    from electra_tf.pretraining.distribute import prepare_devices
    from electra_tf.pretraining.run import (
        config_for_data,
        config_for_vocabulary,
        run_pretraining,
    )

    recipe = args.recipe or ("adapt" if args.init else "tiny")
    config = load_recipe(recipe).override(*flag_overrides(args), *args.overrides)
    prepare_devices(config.train)  # threads and logical CPUs, before the warm start's ops
    warm = None
    if args.init:
        from electra_tf.tasks.initialization import load_warm_start

        warm = load_warm_start(args.init)
    sources = None
    if args.text:
        from electra_tf.data.corpus import TextSource

        if args.data:
            raise ConfigError("Give --data (prepared examples) or --text (raw text), not both.")
        vocab = args.vocab_file or (warm.vocab_file if warm else None)
        if not vocab:
            raise ConfigError("--text needs --vocab-file (learn one with electra-tf prepare).")
        config = config_for_vocabulary(config, vocab)
        sources = [TextSource(args.text, layout=args.layout)]
    else:
        explicit = [item.split("=")[0].strip() for item in args.overrides]
        config = config_for_data(config, explicit)
    if warm is not None:
        from electra_tf.pretraining.warm_start import config_for_warm_start

        config = config_for_warm_start(config, warm)
    result = run_pretraining(
        config,
        args.output_dir,
        verbose=args.verbose,
        resume=not args.no_resume,
        max_steps=args.max_steps,
        text_sources=sources,
        warm_start=warm,
    )
    print_json(
        {
            "step": result.step,
            "resumed_from": result.resumed_from,
            "checkpoint": str(result.checkpoint) if result.checkpoint else None,
            "seconds": round(result.seconds, 1),
            "metrics": {k: round(v, 4) for k, v in result.logs.items()},
        }
    )
    return 0
