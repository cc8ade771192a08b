"""Step checkpoints that carry their config and resume exactly.

A checkpoint is a folder `step-00001000/` holding a `tf.train.Checkpoint` of
the model, the optimizer (its step counter included) and the non-trainable
state (dropout seed generators), plus `config.json` (the `ElectraConfig`
that made it) and `state.json` (the step). It is written under a temporary
name and renamed into place, so a run killed mid-write never leaves a
half-written checkpoint where resuming would find it. The last `keep` are
kept. The data position needs no saving: the input stream is addressable
by step (see `electra_tf.data.pipeline`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import tensorflow as tf

from electra_tf.config import ConfigError, ElectraConfig

__all__ = [
    "Checkpointer",
    "checkpoint_object",
    "find_checkpoint",
    "read_checkpoint_config",
    "load_pretrainer",
    "save_pretrainer",
]

_NAME = re.compile(r"^step-(\d+)$")


def checkpoint_object(model) -> tf.train.Checkpoint:
    """The `tf.train.Checkpoint` of a compiled pretrainer (model, optimizer, all state)."""
    # Keras seed-generator states are not reachable through `model=`; list every
    # non-trainable variable explicitly (by position: names carry global counters).
    states = [v.value for v in model.non_trainable_variables]
    if getattr(model, "optimizer", None) is None:
        return tf.train.Checkpoint(model=model, states=states)
    return tf.train.Checkpoint(model=model, optimizer=model.optimizer, states=states)


def find_checkpoint(path: str | Path) -> Path | None:
    """The checkpoint folder `path` names: a `step-N` folder, or the latest inside a run or
    `checkpoints/` folder. None if there is none."""
    path = Path(path)
    if (path / "state.json").exists():
        return path
    for folder in (path / "checkpoints", path):
        steps = sorted(
            (int(m.group(1)), child)
            for child in (folder.iterdir() if folder.is_dir() else [])
            if (m := _NAME.match(child.name)) and (child / "state.json").exists()
        )
        if steps:
            return steps[-1][1]
    return None


def read_checkpoint_config(path: str | Path) -> ElectraConfig:
    """The `ElectraConfig` stored with a checkpoint."""
    folder = find_checkpoint(path)
    if folder is None:
        raise ConfigError(f"No checkpoint found at {path} (expected a step-N folder or a run).")
    return ElectraConfig.from_json((folder / "config.json").read_text(), str(folder))


class Checkpointer:
    """Writes, lists, prunes and restores step checkpoints of one run.

    Args:
        directory: the run's `checkpoints/` folder.
        model: a compiled `ElectraPretrainer`.
        keep: how many recent checkpoints to keep.
        is_chief: only the chief writes into `directory`; other workers of a
            multi-worker run write to a scratch folder they delete (every
            worker must take part in saving distributed variables).
    """

    def __init__(self, directory, model, keep: int = 3, is_chief: bool = True, worker_id: int = 0):
        self.directory = Path(directory)
        self.model = model
        self.keep = keep
        self.is_chief = is_chief
        self.worker_id = worker_id
        self._checkpoint = checkpoint_object(model)

    def steps(self) -> list[int]:
        if not self.directory.is_dir():
            return []
        return sorted(
            int(m.group(1))
            for child in self.directory.iterdir()
            if (m := _NAME.match(child.name)) and (child / "state.json").exists()
        )

    def latest(self) -> Path | None:
        steps = self.steps()
        return self.directory / f"step-{steps[-1]:08d}" if steps else None

    def save(self, step: int, extra: dict | None = None) -> Path:
        """Writes the checkpoint of `step` atomically and prunes old ones."""
        final = self.directory / f"step-{step:08d}"
        if self.is_chief:
            scratch = self.directory / f".tmp-step-{step:08d}"
        else:
            scratch = self.directory.parent / f".worker-{self.worker_id}-tmp" / f"step-{step:08d}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True, exist_ok=True)
        self._checkpoint.write(str(scratch / "ckpt"))
        if not self.is_chief:
            shutil.rmtree(scratch.parent, ignore_errors=True)
            return final
        (scratch / "config.json").write_text(self.model.config.to_json() + "\n")
        state = {"step": int(step), **(extra or {})}
        (scratch / "state.json").write_text(json.dumps(state, indent=2) + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(scratch, final)
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
        path: a `step-N` folder, a run folder or its `checkpoints/` folder (latest step).
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
    status = checkpoint_object(model).read(str(folder / "ckpt"))
    try:
        status.assert_existing_objects_matched()
    except AssertionError:
        raise ConfigError(
            f"Checkpoint {folder} does not match the config stored with it "
            f"({folder / 'config.json'})."
        ) from None
    return model


def save_pretrainer(model, run_dir, step: int = 0) -> Path:
    """Writes `model` as the checkpoint of a new run folder (imported weights, say)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(model.config.to_json() + "\n")
    if getattr(model, "optimizer", None) is None:
        model.compile()
    return Checkpointer(run_dir / "checkpoints", model).save(step)
