"""`electra-tf`: one entry point with subcommands, one module each.

Each module only parses its flags and calls the library. Imports are deferred
to the subcommand that runs, so `--help` answers without loading TensorFlow.
"""

from __future__ import annotations

import argparse
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

__all__ = ["main", "build_parser"]

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


if __name__ == "__main__":
    sys.exit(main())
