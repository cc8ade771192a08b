"""A seed's best epoch on disk: `best.weights.npz` (its weights) and `best.json` (its entry).

The weights file holds the model's trainable and non-trainable values by position
(`portable_checkpoint.write_weights`), without the optimizer's state: a third of what
Keras's `save_weights` writes for a compiled model under Adam (its two moments per weight),
which no reader of the best weights uses. It reads back on any backend. A seed folder
written by an older version holds `best.weights.h5` (Keras's `save_weights`) instead; it
is still read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.io.durable import (
    ensure_space,
    fsync_path,
    os_reason,
    read_json,
    variables_bytes,
    write_atomic,
)
from electra_tf.pretraining.portable_checkpoint import read_weights, write_weights

__all__ = ["BEST_WEIGHTS", "best_file", "best_written", "read_best", "remove_best", "write_best"]

BEST_WEIGHTS = "best.weights.npz"
_OLDER = "best.weights.h5"  # Keras's save_weights, optimizer included: read, never written


def best_file(folder) -> Path | None:
    """The seed folder's best weights file, this version's or an older one's; None if none."""
    for name in (BEST_WEIGHTS, _OLDER):
        if (Path(folder) / name).is_file():
            return Path(folder) / name
    return None


def write_best(model, folder, entry: dict) -> None:
    """`best.weights.npz` (the model's weights now) and `best.json` (`entry`), each published
    whole: the weights under a scratch name, synced, then renamed."""
    folder = Path(folder)
    scratch = folder / ".best-scratch.weights.npz"
    try:
        ensure_space(folder, variables_bytes(model.weights))
        write_weights(model, scratch)
        fsync_path(scratch)
        os.replace(scratch, folder / BEST_WEIGHTS)
        (folder / _OLDER).unlink(missing_ok=True)  # an older version's, now stale
        write_atomic(folder / "best.json", json.dumps(entry, indent=2) + "\n")
    except OSError as error:
        scratch.unlink(missing_ok=True)
        raise ConfigError(
            f"Could not write the best epoch's weights into {folder} ({os_reason(error)}); "
            "free space or choose a writable --output-dir, then rerun: it resumes from the "
            "newest epoch checkpoint."
        ) from None


def best_written(folder, best: dict | None) -> bool:
    """Whether `folder` holds the weights of the best epoch `best` (None: nothing to hold)."""
    if best is None:
        return True
    recorded = read_json(Path(folder) / "best.json")
    epoch = recorded.get("epoch") if isinstance(recorded, dict) else None
    return best_file(folder) is not None and epoch == best["epoch"]


def read_best(model, path) -> None:
    """Sets `model`'s weights from a best weights file (`best_file`)."""
    if Path(path).suffix == ".npz":
        read_weights(model, path)
    else:
        model.load_weights(path)


def remove_best(folder) -> None:
    """Deletes the seed folder's best weights (either form)."""
    for name in (BEST_WEIGHTS, _OLDER):
        (Path(folder) / name).unlink(missing_ok=True)
