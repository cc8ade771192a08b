"""The fine-tuning engine: epochs with a dev score each, the best epoch kept, exact resume.

`train_seed(job, init, config, seed, folder)` fine-tunes one seed. The model is
the job's Keras task model (`ElectraTextClassifier`, `ElectraTokenClassifier`,
`ElectraSpanExtractor`) trained by its own `fit`; `EpochSelection`, a Keras
callback, scores dev after every epoch with the task's metric, keeps the best
epoch's weights, writes a resume checkpoint and stops after `patience` epochs
without a gain. Everything lands in `folder` (`seed-N/`):

- `epoch-E/`: the model, its optimizer and random state after epoch E, with
  `state.json` (the dev history and the best so far) and `record.json`; only
  the newest is kept, and it is published (synced, renamed) before the older
  one is deleted, so a run killed at any point resumes from its last epoch;
- `best.weights.h5` and `best.json`: the best epoch so far, written after the
  epoch's checkpoint (a run killed in between writes them from it on resume);
- `result.json`, written last: the best epoch's scores on every split.

A re-run finds `result.json` and reuses it, or the newest `epoch-E/` that
verifies and goes on from there: the batch order of an epoch depends only on
the seed and the epoch (`electra_tf.data.batching`), so the resumed run sees
what the uninterrupted one would have.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.io.durable import (
    ensure_space,
    fsync_path,
    os_reason,
    publishing,
    remove_folder,
    variables_bytes,
    verify_record,
    write_atomic,
    write_record,
)
from electra_tf.pretraining.checkpoint import checkpoint_object, first_nonfinite_weight
from electra_tf.tasks.optimizer import finetuning_optimizer

__all__ = ["EpochSelection", "train_seed", "read_json", "better", "write_best"]

_EPOCH = re.compile(r"^epoch-(\d+)$")


def read_json(path) -> dict | None:
    """A JSON file's content, or None when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def better(value: float, best: float | None, lower_is_better: bool = False) -> bool:
    """Whether `value` improves on `best` (None: nothing yet)."""
    if best is None or not np.isfinite(best):
        return bool(np.isfinite(value))
    return value < best if lower_is_better else value > best


def _epoch_folders(folder: Path) -> list[tuple[int, Path]]:
    if not folder.is_dir():
        return []
    return sorted(
        (int(m.group(1)), child)
        for child in folder.iterdir()
        if (m := _EPOCH.match(child.name)) and child.is_dir()
    )


class EpochSelection(keras.callbacks.Callback):
    """After each epoch: the dev score, the best weights kept, a resume checkpoint, patience.

    Args:
        job: the task's job (its `score(model, split)`, `main_metric` and `selection`,
            the split that chooses).
        folder: the seed's folder.
        state: `{"history": [...], "best": {...} or None}`, restored on resume.
        patience: stop after this many epochs without a better dev score (0: never).
        log: called with one line per epoch (None: quiet).
    """

    def __init__(self, job, folder: Path, state: dict, patience: int = 0, log=None):
        super().__init__()
        self.job, self.folder, self.state = job, Path(folder), state
        self.patience, self.log = patience, log

    def on_epoch_end(self, epoch, logs=None):
        bad = first_nonfinite_weight(self.model)
        if bad is not None:
            raise ConfigError(
                f"Fine-tuning diverged in epoch {epoch + 1} (the weight {bad} is not finite); "
                f"{self.folder} keeps the last good epoch. Lower --set learning_rate=..."
            )
        scores = self.job.score(self.model, self.job.selection)
        entry = {"epoch": epoch + 1, "loss": float((logs or {}).get("loss", math.nan)), **scores}
        self.state["history"].append(entry)
        best = self.state.get("best")
        metric = self.job.main_metric
        improved = better(scores[metric], best[metric] if best else None)
        if improved:
            self.state["best"] = entry
        since = entry["epoch"] - self.state["best"]["epoch"] if self.state.get("best") else 0
        stop = bool(self.patience) and since >= self.patience
        self.state["stopped"] = stop
        # The checkpoint first: it holds this epoch's weights and the state that names the
        # best epoch, so a kill before `best.weights.h5` is written loses nothing
        # (`_resume` writes them from it).
        self._write_epoch(entry["epoch"])
        if improved:
            write_best(self.model, self.folder, entry)
        if self.log:
            shown = ", ".join(f"{k} {v:.4f}" for k, v in scores.items())
            mark = " (best)" if since == 0 else ""
            self.log(f"epoch {entry['epoch']}: loss {entry['loss']:.4f}, dev {shown}{mark}")
        if stop:
            self.model.stop_training = True

    def _write_epoch(self, epoch: int) -> None:
        final = self.folder / f"epoch-{epoch:04d}"
        try:
            # The weights and the optimizer's two moments of each.
            ensure_space(self.folder, 3 * variables_bytes(self.model.weights))
            with publishing(final) as scratch:
                checkpoint_object(self.model).write(str(scratch / "ckpt"))
                (scratch / "state.json").write_text(json.dumps(self.state, indent=2) + "\n")
                write_record(scratch)
        except (OSError, tf.errors.OpError) as error:
            raise ConfigError(
                f"Could not write {final} ({os_reason(error)}); free space or choose a writable "
                "--output-dir. The previous epoch's checkpoint is untouched."
            ) from None
        for number, older in _epoch_folders(self.folder):
            if number < epoch:
                remove_folder(older)


def write_best(model, folder: Path, entry: dict) -> None:
    """`best.weights.h5` (the model's weights now) and `best.json` (`entry`), each published
    whole: the weights under a scratch name, synced, then renamed."""
    scratch = folder / ".best-scratch.weights.h5"
    try:
        ensure_space(folder, variables_bytes(model.weights))  # h5py crashes on a full disk
        model.save_weights(scratch)
        fsync_path(scratch)
        os.replace(scratch, folder / "best.weights.h5")
        write_atomic(folder / "best.json", json.dumps(entry, indent=2) + "\n")
    except OSError as error:
        scratch.unlink(missing_ok=True)
        raise ConfigError(
            f"Could not write the best epoch's weights into {folder} ({os_reason(error)}); "
            "free space or choose a writable --output-dir, then rerun to resume: the epoch's "
            "checkpoint holds them."
        ) from None


def _best_written(folder: Path, best: dict | None) -> bool:
    recorded = read_json(folder / "best.json")
    return best is None or (
        (folder / "best.weights.h5").exists()
        and recorded is not None
        and recorded.get("epoch") == best["epoch"]
    )


def _resume(model, folder: Path, log) -> tuple[int, dict]:
    """(epochs done, state) from the newest epoch checkpoint that verifies; (0, fresh) if none."""
    for epoch, child in reversed(_epoch_folders(folder)):
        reason = verify_record(child, required=("state.json",))
        if reason is None:
            state = json.loads((child / "state.json").read_text())
            checkpoint_object(model).read(str(child / "ckpt")).assert_existing_objects_matched()
            if not _best_written(folder, state.get("best")):
                # Killed between this checkpoint and the best weights it names (this epoch's).
                write_best(model, folder, state["best"])
            if log:
                log(f"resuming after epoch {epoch} ({child})")
            return epoch, state
        target = child.with_name(child.name + ".corrupt")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(child, target)
        if log:
            log(f"{child} is not usable ({reason}); moved it to {target.name}")
    return 0, {"history": [], "best": None, "stopped": False}


def train_seed(job, init, config, seed: int, folder, log=None, trained=None) -> dict:
    """Fine-tunes one seed (or reads its finished result); returns the seed's result.

    Args:
        job: the task's job (`build`, `rows`, `fit`, `score`, `splits`, `main_metric`).
        init: the `Initialization` every seed starts from.
        config: the resolved `FinetuneConfig`.
        seed: the seed (head initialization, dropout, batch order).
        folder: the seed's folder.
        log: called with progress lines (None: quiet).
        trained: a dict that receives the model, holding its best epoch's weights, under
            "model" when this call trained it (so the caller can keep it without a rebuild).

    Returns:
        {"seed", "best_epoch", "epochs_run", "history", "train_loss", and one entry of
        metrics per scored split}.
    """
    folder = Path(folder)
    done = read_json(folder / "result.json")
    if done is not None:
        for _, child in _epoch_folders(folder):  # left by a kill right after result.json
            remove_folder(child)
        return done
    folder.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(seed)  # the head's initialization and dropout
    model = job.build(init, config)
    steps = math.ceil(job.rows() / config.batch_size) * config.epochs
    model.compile(
        optimizer=finetuning_optimizer(model, config, steps), **job.compile_arguments(model)
    )
    model.optimizer.build(model.trainable_variables)
    start, state = _resume(model, folder, log)
    if start < config.epochs and not state.get("stopped"):
        selection = EpochSelection(job, folder, state, config.patience, log)
        job.fit(model, config, seed, initial_epoch=start, callbacks=[selection])
    if state.get("best") is None:
        raise ConfigError(f"Seed {seed} finished no epoch; see {folder}.")
    model.load_weights(folder / "best.weights.h5")
    result = {
        "seed": seed,
        "best_epoch": state["best"]["epoch"],
        "epochs_run": len(state["history"]),
        "history": state["history"],
        "train_loss": [entry["loss"] for entry in state["history"]],
    }
    # The chosen split was scored with these weights when they were best; the others now.
    chosen = {k: v for k, v in state["best"].items() if k not in ("epoch", "loss")}
    for split in job.splits():
        result[split] = chosen if split == job.selection else job.score(model, split)
    write_atomic(folder / "result.json", json.dumps(result, indent=2) + "\n")
    for _, child in _epoch_folders(folder):
        remove_folder(child)
    if trained is not None:
        trained["model"] = model
    return result
