"""What every subcommand shares: the TensorFlow environment, config flags, JSON output, errors."""

from __future__ import annotations

import argparse
import json
import os

__all__ = [
    "prepare_environment",
    "add_config_flags",
    "add_overrides",
    "print_json",
    "user_errors",
]


def prepare_environment() -> None:
    """TensorFlow settings that must precede its import (a user's own setting wins)."""
    # oneDNN's fp32 matmuls are 20-40% faster on AVX2 CPUs than TensorFlow's default here.
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def add_overrides(parser: argparse.ArgumentParser, help: str, metavar="SECTION.KEY=VALUE"):
    """`--set KEY=VALUE` (repeatable), collected in `args.overrides`."""
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar=metavar, help=help
    )


def add_config_flags(parser: argparse.ArgumentParser, default_recipe: str) -> None:
    """`--recipe` and `--set` for a pre-training config."""
    parser.add_argument(
        "--recipe",
        default=default_recipe,
        help=f"named recipe (tiny, small, base, large) or path to a .toml file "
        f"(default: {default_recipe})",
    )
    add_overrides(
        parser, "override one config value, e.g. --set train.learning_rate=1e-4 (repeatable)"
    )


def print_json(value, indent=2) -> None:
    """Prints `value` as JSON (paths and other objects as strings)."""
    print(json.dumps(value, indent=indent, default=str), flush=True)


#: errno values of a disk that cannot take a write: full, over quota, read-only, refused.
_DISK_ERRNOS = {28: "the disk is full", 122: "the disk quota is used up",
                30: "the file system is read-only", 13: "writing there is not permitted",
                1: "writing there is not permitted"}  # fmt: skip
_DISK_TEXTS = {"No space left": 28, "Disk quota exceeded": 122, "Read-only file system": 30,
               "Permission denied": 13}  # fmt: skip


def disk_error(error: BaseException) -> str | None:
    """One sentence for an `OSError` of a disk that cannot take a write (full, read-only,
    not permitted), naming the file; None for any other error.

    >>> print(disk_error(OSError(28, "No space left on device", "runs/model.keras")))
    Could not write runs/model.keras: the disk is full; free space there or choose another folder.
    >>> disk_error(ValueError("no")) is None
    True
    """
    if not isinstance(error, OSError):
        return None
    number = error.errno
    if number not in _DISK_ERRNOS:  # h5py and TensorFlow put the reason in the message
        number = next((n for text, n in _DISK_TEXTS.items() if text in str(error)), None)
    if number is None:
        return None
    where = error.filename or "the output"
    advice = "free space there" if number in (28, 122) else "make it writable"
    return f"Could not write {where}: {_DISK_ERRNOS[number]}; {advice} or choose another folder."


def user_errors() -> tuple:
    """The exceptions that carry a one-sentence message for the user (exit status 2)."""
    from electra_tf.config import ConfigError
    from electra_tf.data.corpus import CorpusError
    from electra_tf.data.public import FetchError
    from electra_tf.data.tfrecords import DataError
    from electra_tf.data.vocabulary import VocabularyError
    from electra_tf.pretraining.run import TrainingDiverged, WorkerLost

    return (
        ConfigError,
        DataError,
        CorpusError,
        VocabularyError,
        FetchError,
        TrainingDiverged,
        WorkerLost,
    )
