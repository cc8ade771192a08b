"""What every subcommand shares: the TensorFlow environment, config flags, JSON output, errors."""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = [
    "prepare_environment",
    "add_config_flags",
    "add_overrides",
    "print_json",
    "user_errors",
    "BACKENDS",
    "select_backend",
    "check_installed",
    "use_backend",
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


#: The Keras backends `pretrain` and `finetune` run on (`--backend`).
BACKENDS = ("tensorflow", "jax", "torch")


def select_backend(requested: str | None, argv) -> None:
    """Makes `requested` the Keras backend of this command before Keras is imported.

    Keras reads KERAS_BACKEND once, at its import. Before that, setting the variable is
    enough; if Keras was already imported with another backend, the command runs again
    in a fresh interpreter with KERAS_BACKEND set (`os.execve`: same process id, so a
    signal sent to the command reaches the run).
    """
    if requested is None:
        return
    keras = sys.modules.get("keras")
    current = keras.config.backend() if keras is not None else None
    os.environ["KERAS_BACKEND"] = requested
    if current is None or current == requested:
        return
    command = [sys.executable, "-m", "electra_tf.cli", *argv]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, dict(os.environ))


def check_installed(backend: str | None) -> None:
    """One sentence, before Keras loads, when the chosen backend's library is not installed."""
    import importlib.util

    from electra_tf.config import ConfigError

    library = {"jax": "jax", "torch": "torch"}.get(backend or "")
    if library and importlib.util.find_spec(library) is None:
        raise ConfigError(
            f"--backend {backend} needs the {library} package, which is not installed here: "
            f"pip install 'electra-tf[{library}]' (on a GPU machine, {library}'s CUDA build)."
        )


def use_backend(args, command: str, before_keras=None) -> None:
    """`--backend` (or KERAS_BACKEND) made this command's Keras backend, before Keras loads
    (`before_keras(args)` runs just before it does); one sentence for a backend that is not
    installed or that `command` does not run on. On JAX, compiled programs are kept on disk
    (`jax_compile_cache`)."""
    from electra_tf.config import ConfigError

    check_installed(args.backend or os.environ.get("KERAS_BACKEND"))
    select_backend(args.backend, getattr(args, "argv", sys.argv[1:]))
    if before_keras is not None:
        before_keras(args)
    import keras

    if keras.config.backend() not in BACKENDS:
        raise ConfigError(
            f"electra-tf {command} runs on the TensorFlow, JAX and PyTorch backends (KERAS_BACKEND "
            f"is {keras.config.backend()!r}); pass --backend tensorflow, jax or torch."
        )
    from electra_tf.ops.backend import jax_compile_cache

    jax_compile_cache()  # on JAX: a repeated run, a resume or the next seed skips the compile
