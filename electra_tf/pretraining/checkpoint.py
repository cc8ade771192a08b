"""Step checkpoints that carry their config, verify themselves and resume exactly.

A checkpoint is a folder `step-00001000/` holding a `tf.train.Checkpoint` of
the model, the optimizer (its step counter included) and the non-trainable
state (dropout seed generators), plus `config.json` (the `ElectraConfig`
that made it), `state.json` (the step) and, written last, `record.json`: the
size and SHA-256 of every other file (`electra_tf.io.durable`). The folder is
written under a scratch name, synced to disk and renamed into place (the folder
holding it synced too), so neither a kill nor a power cut mid-write leaves a
half-written checkpoint where resuming would find it. The last `keep` are kept,
and pruning never deletes the newest checkpoint known to be good (`Checkpointer`).
The data position is the number of batches read (`state.json`'s `batches`; the
input stream is addressable by it, see `electra_tf.data.pipeline`): the step
counter alone falls behind it when a step is skipped (a loss scale calibrating).

Reading verifies: a checkpoint whose files do not match its record (truncated,
missing, altered), or that has no `state.json` or an unreadable config, is
reported in one sentence and moved aside to `step-N.corrupt` (never deleted);
resuming and loading a run fall back to the newest checkpoint that verifies. A
checkpoint without a record (written before records existed, or whose record was
deleted) is verified by reading every tensor its index lists (each one's size and
checksum are checked against the index) and by its optimizer step, which must be
the step its `state.json` and its name give.
Writing refuses non-finite weights, and a write that fails for lack of space
or permission removes its scratch folder and says so, leaving every earlier
checkpoint as it was.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path

import tensorflow as tf

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.io.durable import (
    os_reason,
    publish_folder,
    remove_folder,
    write_atomic,
    write_record,
)
from electra_tf.ops import backend
from electra_tf.pretraining.checkpoint_checks import (
    READ_ERRORS,
    STEP_NAME,
    first_nonfinite_slot,
    first_nonfinite_weight,
    refuse_suspect,
    step_folders,
    verify_checkpoint,
)
from electra_tf.pretraining.portable_checkpoint import (
    is_portable,
    read_rng_states,
    read_variables,
    readable_here,
    write_variables,
)
from electra_tf.pretraining.tensorflow_checkpoint import read_tensorflow_weights

__all__ = [
    "Checkpointer",
    "CheckpointError",
    "checkpoint_object",
    "find_checkpoint",
    "verify_checkpoint",
    "first_nonfinite_weight",
    "first_nonfinite_slot",
    "read_checkpoint_config",
    "load_pretrainer",
    "save_pretrainer",
]

_NAME = STEP_NAME


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


def _quarantine(folder: Path, reason: str, log, kind: str = "corrupt") -> Path:
    """Moves a failed checkpoint aside to `<name>.<kind>` (never deletes it)."""
    target = folder.with_name(f"{folder.name}.{kind}")
    suffix = 1
    while target.exists():
        suffix += 1
        target = folder.with_name(f"{folder.name}.{kind}{suffix}")
    os.replace(folder, target)
    verdict = "is not usable" if kind == "corrupt" else "is not a good checkpoint"
    log(f"[checkpoint] {folder} {verdict} ({reason}); moved it to {target.name}.")
    return target


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
        steps = step_folders(folder)
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

    It also tells good checkpoints from suspect ones. A checkpoint's weights are judged
    by the loss of the step after it: `judge(healthy)` after each step confirms the
    newest unjudged checkpoint as good, or marks it bad. One written while the run is in
    trouble (`save(..., suspect=reason)`: a skipped step, a loss out of its recent
    range) is bad from the start and says why in its `state.json`. Pruning keeps the last
    `keep` checkpoints and never the newest good one (`good`); after a run diverges,
    `set_aside_unhealthy` moves every checkpoint newer than it to `step-N.unhealthy`, so
    resuming, exporting and loading the run find the good one.

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
        # Off TensorFlow, every variable's value in one variables.npz (`portable_checkpoint`).
        self._checkpoint = checkpoint_object(model) if backend.name() == "tensorflow" else None
        self.good = None  # newest step whose weights gave a healthy next step
        self.good_steps = set()  # every step judged good
        self.lowest_step = None  # the step of the run's lowest median loss (the guard's)
        self.unjudged = None  # newest step saved in good health, not judged yet
        self.bad = {}  # step -> why its checkpoint is not good
        self.touched = set()  # steps this run saved or restored (the ones it can judge)
        self.rng_states = None  # torch's generators in the restored checkpoint, on PyTorch

    def steps(self) -> list[int]:
        """Steps of the checkpoints on disk that have a state (not yet verified)."""
        return [
            step
            for step, folder in step_folders(self.directory)
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

    def judge(self, healthy: bool, reason: str = "") -> None:
        """The verdict of the step after the newest unjudged checkpoint, on its weights."""
        if self.unjudged is None:
            return
        if healthy:
            self.good = self.unjudged
            self.good_steps.add(self.unjudged)
        else:
            self.bad[self.unjudged] = reason or "the step after it was not healthy"
        self.unjudged = None

    def lowest_loss_at(self, step: int) -> None:
        """The run's median loss is at its lowest at `step`: pruning keeps the newest good
        checkpoint at or before it (`anchor`), should the loss climb from there."""
        self.lowest_step = int(step)

    @property
    def anchor(self) -> int | None:
        """The newest good step at or before the run's lowest median loss."""
        limit = self.lowest_step if self.lowest_step is not None else math.inf
        return max((s for s in self.good_steps if s <= limit), default=None)

    def distrust_after(self, step: int, reason: str) -> None:
        """No checkpoint newer than `step` is good any more (the loss diverged from there)."""
        for later in [s for s in self.touched | self.good_steps if s > step]:
            self.bad.setdefault(later, reason)
            self.good_steps.discard(later)
        if self.unjudged is not None and self.unjudged > step:
            self.unjudged = None
        self.good = max(self.good_steps, default=None)

    def set_aside_unhealthy(self) -> list[Path]:
        """Moves the checkpoints this run wrote (or resumed from) that are newer than the
        newest good one to `step-N.unhealthy`; returns where they went."""
        moved = []
        for step in self.steps() if self.is_chief else ():
            if step in self.touched and (self.good is None or step > self.good):
                reason = self.bad.get(step, "written after the run's first sign of trouble")
                folder = self.directory / f"step-{step:08d}"
                moved.append(_quarantine(folder, reason, self.log, kind="unhealthy"))
        return moved

    def _refuse_nonfinite(self, final: Path) -> None:
        bad = first_nonfinite_weight(self.model)
        what = "weight"
        if bad is None:
            bad, what = first_nonfinite_slot(self.model), "optimizer variable"
        if bad is not None:
            raise CheckpointError(
                f"Not writing {final.name}: the {what} {bad} is not finite; the newest "
                f"checkpoint in {self.directory} is still the last good one."
            )

    def save(self, step: int, extra: dict | None = None, suspect: str | None = None) -> Path:
        """Writes the checkpoint of `step` atomically and durably, then prunes old ones.

        Args:
            step: the optimizer step.
            extra: more keys for its `state.json`.
            suspect: why the run is in trouble as it is written (recorded in its
                `state.json`; such a checkpoint is never the good one), or None.

        Raises:
            CheckpointError: a weight or optimizer variable is not finite, or the folder
                cannot be written (full, read-only, no permission); the scratch folder is
                removed and every earlier checkpoint is left as it was.
        """
        final = self.directory / f"step-{step:08d}"
        self._refuse_nonfinite(final)
        if self.is_chief:
            scratch = self.directory / f".tmp-step-{step:08d}"
        else:
            scratch = self.directory.parent / f".worker-{self.worker_id}-tmp" / f"step-{step:08d}"
        try:
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True, exist_ok=True)
            if self._checkpoint is None:
                write_variables(self.model, scratch)
            else:
                self._checkpoint.write(str(scratch / "ckpt"))
            if not self.is_chief:
                shutil.rmtree(scratch.parent, ignore_errors=True)
                return final
            write_atomic(scratch / "config.json", self.model.config.to_json() + "\n")
            state = {"step": int(step), **(extra or {})}
            if suspect:
                state["suspect"] = suspect
            write_atomic(scratch / "state.json", json.dumps(state, indent=2) + "\n")
            write_record(scratch)
            publish_folder(scratch, final)  # synced files, then the rename, then the folder
        except (OSError, tf.errors.OpError) as error:
            shutil.rmtree(scratch if self.is_chief else scratch.parent, ignore_errors=True)
            raise CheckpointError(
                f"Could not write checkpoint {final.name} into {self.directory} "
                f"({os_reason(error)}); free space or choose a writable --output-dir. "
                "Earlier checkpoints are untouched."
            ) from None
        self.touched.add(int(step))
        if suspect:
            self.bad[int(step)] = suspect
        else:
            self.unjudged = int(step)
        for old in self.steps()[: -self.keep]:
            # The newest good checkpoint, and the one before a climb of the loss, outlive
            # any pruning.
            if old not in (self.good, self.anchor):
                remove_folder(self.directory / f"step-{old:08d}")
        return final

    def restore(self, folder: str | Path) -> int:
        """Loads a checkpoint into the model and optimizer; returns its step.

        The restored checkpoint is judged by the next step, as if just written.
        """
        folder = Path(folder)
        readable_here(folder, backend.name())
        if is_portable(folder):
            read_variables(self.model, folder)
            self.rng_states = read_rng_states(folder)  # PyTorch's; put back by StepCheckpoint
        elif backend.name() != "tensorflow":  # a TensorFlow run resumed on JAX or PyTorch
            read_tensorflow_weights(self.model, folder, with_optimizer=True)
        else:
            status = self._checkpoint.read(str(folder / "ckpt"))
            try:
                status.assert_existing_objects_matched()
            except AssertionError:
                raise ConfigError(
                    f"Checkpoint {folder} does not match this model; its config is in "
                    f"{folder / 'config.json'}."
                ) from None
        step = int(json.loads((folder / "state.json").read_text())["step"])
        self.unjudged = step
        self.touched.add(step)
        return step


def load_pretrainer(path, allow_suspect: bool = False):
    """A compiled `ElectraPretrainer` with the weights (and optimizer state) of a checkpoint.

    A checkpoint written on TensorFlow (`ckpt.*`) gives only its weights on another backend
    (`tensorflow_checkpoint`): what `--init`, `export` and `evaluate` take (a resume there
    reads the optimizer's state too: `Checkpointer.restore`).

    Args:
        path: a `step-N` folder, a run folder or its `checkpoints/` folder (newest
            checkpoint that verifies).
        allow_suspect: load a checkpoint written while the run was in trouble (its
            `state.json` says `suspect`); refused by default.
    """
    from electra_tf.layers.initializers import draws_skipped
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    folder = find_checkpoint(path)
    if folder is None:
        raise ConfigError(f"No checkpoint found at {path} (expected a step-N folder or a run).")
    if not allow_suspect:
        refuse_suspect(folder)
    config = ElectraConfig.from_json((folder / "config.json").read_text(), str(folder))
    with draws_skipped():  # every variable is read below, or the load fails
        model = ElectraPretrainer(config)
    # Compiled, as when it was saved: Keras 3's object graph lists the compiled model's
    # trackers among its children, and restoring into an uncompiled model would pair some
    # objects by a shifted position.
    model.compile()
    try:
        if is_portable(folder):  # written on JAX: read on any backend
            read_variables(model, folder)
            return model
        if backend.name() != "tensorflow":
            read_tensorflow_weights(model, folder)  # the weights only: no optimizer state
            return model
        status = checkpoint_object(model).read(str(folder / "ckpt"))
        status.assert_existing_objects_matched()
    except AssertionError:
        raise ConfigError(
            f"Checkpoint {folder} does not match the config stored with it "
            f"({folder / 'config.json'})."
        ) from None
    except READ_ERRORS as error:
        reason = getattr(error, "message", str(error)).splitlines()[0][:200]
        raise CheckpointError(f"Checkpoint {folder} cannot be read ({reason}).") from None
    return model


def save_pretrainer(model, run_dir, step: int = 0, extra: dict | None = None) -> Path:
    """Writes `model` as the checkpoint of a new run folder (imported weights, say).

    `extra` goes into the checkpoint's `state.json` (what was imported, say).
    """
    run_dir = Path(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(run_dir / "config.json", model.config.to_json() + "\n")
    except OSError as error:
        raise CheckpointError(
            f"Could not write into {run_dir} ({os_reason(error)}); free space or choose a "
            "writable folder."
        ) from None
    if getattr(model, "optimizer", None) is None:
        model.compile()
    return Checkpointer(run_dir / "checkpoints", model).save(step, extra)
