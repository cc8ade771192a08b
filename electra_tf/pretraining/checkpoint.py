"""Step checkpoints that carry their config, verify themselves and resume exactly.

A checkpoint is a folder `step-00001000/` holding a `tf.train.Checkpoint` of
the model, the optimizer (its step counter included) and the non-trainable
state (dropout seed generators), plus `config.json` (the `ElectraConfig`
that made it), `state.json` (the step) and, written last, `record.json`: the
size and SHA-256 of every other file. The folder is written under a scratch
name and renamed into place, so a run killed mid-write never leaves a
half-written checkpoint where resuming would find it. The last `keep` are kept.
The data position needs no saving: the input stream is addressable by step
(see `electra_tf.data.pipeline`).

Reading verifies: a checkpoint whose files do not match its record (truncated,
missing, altered), or that has no `state.json` or an unreadable config, is
reported in one sentence and moved aside to `step-N.corrupt` (never deleted);
resuming and loading a run fall back to the newest checkpoint that verifies.
Writing refuses non-finite weights, and a write that fails for lack of space
or permission removes its scratch folder and says so, leaving every earlier
checkpoint as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf.config import ConfigError, ElectraConfig

__all__ = [
    "Checkpointer",
    "CheckpointError",
    "checkpoint_object",
    "find_checkpoint",
    "verify_checkpoint",
    "first_nonfinite_weight",
    "read_checkpoint_config",
    "load_pretrainer",
    "save_pretrainer",
]

_NAME = re.compile(r"^step-(\d+)$")
RECORD = "record.json"


class CheckpointError(ConfigError):
    """A checkpoint that cannot be written or read, named in the message."""


def checkpoint_object(model) -> tf.train.Checkpoint:
    """The `tf.train.Checkpoint` of a compiled pretrainer (model, optimizer, all state)."""
    # Keras seed-generator states are not reachable through `model=`; list every
    # non-trainable variable explicitly (by position: names carry global counters).
    states = [v.value for v in model.non_trainable_variables]
    if getattr(model, "optimizer", None) is None:
        return tf.train.Checkpoint(model=model, states=states)
    return tf.train.Checkpoint(model=model, optimizer=model.optimizer, states=states)


def first_nonfinite_weight(model) -> str | None:
    """The path of the first weight of `model` holding a NaN or an infinity, or None."""
    for variable in model.weights:
        value = variable.numpy()
        if np.issubdtype(value.dtype, np.floating) and not np.all(np.isfinite(value)):
            return variable.path
    return None


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_record(folder: Path) -> None:
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != RECORD)
    record = {p.name: {"bytes": p.stat().st_size, "sha256": _digest(p)} for p in files}
    temporary = folder / (RECORD + ".tmp")
    with open(temporary, "w") as handle:
        json.dump(record, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, folder / RECORD)


def verify_checkpoint(folder) -> str | None:
    """Why `folder` is not a usable checkpoint (one phrase), or None when it verifies.

    Checkpoints written before records existed pass when their state and config
    read and their index file is there.
    """
    folder = Path(folder)
    for name in ("state.json", "config.json"):
        path = folder / name
        if not path.is_file():
            return f"it has no {name}"
        try:
            json.loads(path.read_text())
        except (OSError, ValueError):
            return f"its {name} is not readable JSON"
    record_path = folder / RECORD
    if not record_path.exists():
        return None if (folder / "ckpt.index").exists() else "it has no ckpt.index"
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return f"its {RECORD} is not readable JSON"
    for name, expected in record.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        size = path.stat().st_size
        if size != expected["bytes"]:
            return f"{name} has {size:,} bytes where {expected['bytes']:,} were written"
        if _digest(path) != expected["sha256"]:
            return f"{name} differs from what was written"
    return None


def _quarantine(folder: Path, reason: str, log) -> Path:
    """Moves a failed checkpoint aside to `<name>.corrupt` (never deletes it)."""
    target = folder.with_name(folder.name + ".corrupt")
    suffix = 1
    while target.exists():
        suffix += 1
        target = folder.with_name(f"{folder.name}.corrupt{suffix}")
    os.replace(folder, target)
    log(f"[checkpoint] {folder} is not usable ({reason}); moved it to {target.name}.")
    return target


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _step_folders(folder: Path) -> list[tuple[int, Path]]:
    if not folder.is_dir():
        return []
    return sorted(
        (int(m.group(1)), child)
        for child in folder.iterdir()
        if (m := _NAME.match(child.name)) and child.is_dir()
    )


def find_checkpoint(path: str | Path, log=_stderr, move_aside: bool = True) -> Path | None:
    """The checkpoint folder `path` names: a `step-N` folder (verified), or the newest
    checkpoint inside a run or `checkpoints/` folder that verifies (the newer ones that
    do not are moved aside, unless `move_aside` is False). None if there is none.

    Raises:
        CheckpointError: `path` is a `step-N` folder that does not verify.
    """
    path = Path(path)
    if _NAME.match(path.name) and path.is_dir():
        reason = verify_checkpoint(path)
        if reason:
            raise CheckpointError(
                f"Checkpoint {path} is not usable ({reason}); give the run folder to use its "
                "newest good checkpoint."
            )
        return path
    for folder in (path / "checkpoints", path):
        steps = _step_folders(folder)
        for _, child in reversed(steps):
            reason = verify_checkpoint(child)
            if reason is None:
                return child
            if move_aside:
                _quarantine(child, reason, log)
        if steps:
            return None
    return None


def read_checkpoint_config(path: str | Path) -> ElectraConfig:
    """The `ElectraConfig` stored with a checkpoint."""
    folder = find_checkpoint(path)
    if folder is None:
        raise ConfigError(f"No checkpoint found at {path} (expected a step-N folder or a run).")
    return ElectraConfig.from_json((folder / "config.json").read_text(), str(folder))


class Checkpointer:
    """Writes, lists, prunes, verifies and restores step checkpoints of one run.

    Args:
        directory: the run's `checkpoints/` folder.
        model: a compiled `ElectraPretrainer`.
        keep: how many recent checkpoints to keep.
        is_chief: only the chief writes into `directory`; other workers of a
            multi-worker run write to a scratch folder they delete (every
            worker must take part in saving distributed variables).
        log: called with one line when a checkpoint is moved aside.
    """

    def __init__(
        self,
        directory,
        model,
        keep: int = 3,
        is_chief: bool = True,
        worker_id: int = 0,
        log=_stderr,
    ):
        self.directory = Path(directory)
        self.model = model
        self.keep = keep
        self.is_chief = is_chief
        self.worker_id = worker_id
        self.log = log
        self._checkpoint = checkpoint_object(model)

    def steps(self) -> list[int]:
        """Steps of the checkpoints on disk that have a state (not yet verified)."""
        return [
            step
            for step, folder in _step_folders(self.directory)
            if (folder / "state.json").exists()
        ]

    def latest(self) -> Path | None:
        """The newest checkpoint that verifies; the chief moves the ones that do not aside."""
        if not self.directory.is_dir():
            return None
        return find_checkpoint(self.directory, self.log, move_aside=self.is_chief)

    def move_aside(self, folder: Path, reason: str) -> None:
        """Reports a checkpoint that failed and (on the chief) moves it to `step-N.corrupt`."""
        if self.is_chief:
            _quarantine(Path(folder), reason, self.log)

    def save(self, step: int, extra: dict | None = None) -> Path:
        """Writes the checkpoint of `step` atomically and prunes old ones.

        Raises:
            CheckpointError: a weight is not finite, or the folder cannot be written
                (full, read-only, no permission); the scratch folder is removed and
                every earlier checkpoint is left as it was.
        """
        final = self.directory / f"step-{step:08d}"
        bad = first_nonfinite_weight(self.model)
        if bad is not None:
            raise CheckpointError(
                f"Not writing {final.name}: the weight {bad} is not finite; the newest "
                f"checkpoint in {self.directory} is still the last good one."
            )
        if self.is_chief:
            scratch = self.directory / f".tmp-step-{step:08d}"
        else:
            scratch = self.directory.parent / f".worker-{self.worker_id}-tmp" / f"step-{step:08d}"
        try:
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True, exist_ok=True)
            self._checkpoint.write(str(scratch / "ckpt"))
            if not self.is_chief:
                shutil.rmtree(scratch.parent, ignore_errors=True)
                return final
            (scratch / "config.json").write_text(self.model.config.to_json() + "\n")
            state = {"step": int(step), **(extra or {})}
            (scratch / "state.json").write_text(json.dumps(state, indent=2) + "\n")
            _write_record(scratch)
            if final.exists():
                shutil.rmtree(final)
            os.replace(scratch, final)
        except (OSError, tf.errors.OpError) as error:
            shutil.rmtree(scratch if self.is_chief else scratch.parent, ignore_errors=True)
            message = getattr(error, "strerror", None) or getattr(error, "message", None)
            raise CheckpointError(
                f"Could not write checkpoint {final.name} into {self.directory} "
                f"({message or error}); free space or choose a writable --output-dir. "
                "Earlier checkpoints are untouched."
            ) from None
        for old in self.steps()[: -self.keep]:
            shutil.rmtree(self.directory / f"step-{old:08d}", ignore_errors=True)
        return final

    def restore(self, folder: str | Path) -> int:
        """Loads a checkpoint into the model and optimizer; returns its step."""
        folder = Path(folder)
        status = self._checkpoint.read(str(folder / "ckpt"))
        try:
            status.assert_existing_objects_matched()
        except AssertionError:
            raise ConfigError(
                f"Checkpoint {folder} does not match this model; its config is in "
                f"{folder / 'config.json'}."
            ) from None
        return int(json.loads((folder / "state.json").read_text())["step"])


def load_pretrainer(path):
    """A compiled `ElectraPretrainer` with the weights (and optimizer state) of a checkpoint.

    Args:
        path: a `step-N` folder, a run folder or its `checkpoints/` folder (newest
            checkpoint that verifies).
    """
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    folder = find_checkpoint(path)
    if folder is None:
        raise ConfigError(f"No checkpoint found at {path} (expected a step-N folder or a run).")
    config = ElectraConfig.from_json((folder / "config.json").read_text(), str(folder))
    model = ElectraPretrainer(config)
    # Compiled, as when it was saved: Keras 3's object graph lists the compiled model's
    # trackers among its children, and restoring into an uncompiled model would pair some
    # objects by a shifted position.
    model.compile()
    try:
        status = checkpoint_object(model).read(str(folder / "ckpt"))
        status.assert_existing_objects_matched()
    except AssertionError:
        raise ConfigError(
            f"Checkpoint {folder} does not match the config stored with it "
            f"({folder / 'config.json'})."
        ) from None
    except (tf.errors.OpError, ValueError) as error:
        reason = getattr(error, "message", str(error)).splitlines()[0][:200]
        raise CheckpointError(f"Checkpoint {folder} cannot be read ({reason}).") from None
    return model


def save_pretrainer(model, run_dir, step: int = 0, extra: dict | None = None) -> Path:
    """Writes `model` as the checkpoint of a new run folder (imported weights, say).

    `extra` goes into the checkpoint's `state.json` (what was imported, say).
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(model.config.to_json() + "\n")
    if getattr(model, "optimizer", None) is None:
        model.compile()
    return Checkpointer(run_dir / "checkpoints", model).save(step, extra)
