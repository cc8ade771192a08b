"""`electra-tf`: one entry point with subcommands, one module each.

Each module only parses its flags and calls the library. Imports are deferred
to the subcommand that runs, so `--help` answers without loading TensorFlow.
"""

from __future__ import annotations

import argparse
import gc
import sys

from electra_tf.cli import (
    bench,
    demo,
    evaluate,
    experiment,
    export,
    finetune,
    import_weights,
    predict,
    prepare,
    pretrain,
)
from electra_tf.cli.common import disk_error, prepare_environment, user_errors
from electra_tf.startup import start_process

__all__ = ["main", "build_parser", "command"]

SUBCOMMANDS = (
    demo,
    prepare,
    pretrain,
    finetune,
    predict,
    export,
    import_weights,
    experiment,
    evaluate,
    bench,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="electra-tf",
        description="ELECTRA pre-training, fine-tuning and serving on TensorFlow 2 / Keras 3.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in SUBCOMMANDS:
        module.add_parser(subparsers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # to run again on another backend
    prepare_environment()
    try:
        return args.handler(args) or 0
    except user_errors() as error:
        print(f"electra-tf {args.command}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        sentence = disk_error(error)
        if sentence is None:
            raise
        print(f"electra-tf {args.command}: {sentence}", file=sys.stderr)
        return 2


def command(argv=None) -> int:
    """`electra-tf ...` as a process (the console script, `python -m electra_tf.cli`):
    `main`, then every object left is moved out of the collector's reach (`gc.freeze`),
    because the interpreter's exit would otherwise walk them all once more: with
    TensorFlow loaded, about 3 s of a 16 s `prepare` on a 2-core AVX2 machine
    (docs/results/performance.md, "Every command's exit"). Exit handlers still run;
    only cycles left uncollected keep their memory until the process ends, a moment
    later. In a longer-lived process (a test, a notebook) call `main`, which leaves the
    collector alone. Before `main`, the frameworks' optional import-time probes are left
    out of the process and the collector waits for the frameworks to load
    (`electra_tf.startup`: about 4 s and 0.9 s of a TensorFlow command's start)."""
    start_process()
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(command())
