"""The fine-tuning engine: epochs with a dev score each, the best epoch kept, exact resume.

`train_seed(job, init, config, seed, folder)` fine-tunes one seed. The model is the job's
Keras task model (`ElectraTextClassifier`, `ElectraTokenClassifier`,
`ElectraQuestionAnswerer`) trained by its own `fit`; `EpochSelection`, a Keras callback,
scores dev after every epoch with the task's metric, keeps the best epoch's weights, writes
a resume checkpoint and stops after `patience` epochs without a gain. Everything lands in
`folder` (`seed-N/`):

- `epoch-E/`, for each epoch but the last: the model, its optimizer and random state after
  epoch E, with `state.json` (the dev history and the best so far) and `record.json`. The
  files are written when the epoch ends; a thread hashes, syncs and publishes (renames) the
  folder while the next epoch trains, then deletes the older ones but the best epoch's, so
  a run killed at any point resumes from its last epoch and still has its best weights;
- `best.weights.npz` and `best.json` (`best_weights`): the best epoch's weights, written
  once when the last epoch ends (from memory, or from the best epoch's checkpoint after a
  resume), then `trained.json`, the seed's history (no epoch follows the last: it needs
  no checkpoint);
- `result.json`, written last: the best epoch's scores on every split (then the
  checkpoints and `trained.json` are deleted).

A re-run finds `result.json` and reuses it, or `trained.json` and goes on to the scores,
or the newest `epoch-E/` that verifies and goes on from there: the batch order of an epoch
depends only on the seed and the epoch (`electra_tf.data.batching`), so the resumed run
sees what the uninterrupted one would have.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import threading
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.finetuning.best_weights import best_file, best_written, read_best, write_best
from electra_tf.io.durable import (
    ensure_space,
    os_reason,
    publish_folder,
    read_json,
    remove_folder,
    variables_bytes,
    verify_record,
    write_atomic,
    write_record,
)
from electra_tf.ops import backend
from electra_tf.pretraining.checkpoint import checkpoint_object, first_nonfinite_weight
from electra_tf.pretraining.portable_checkpoint import (
    is_portable,
    put_back_rng_states,
    read_rng_states,
    read_variables,
    write_variables,
)
from electra_tf.pretraining.tensorflow_checkpoint import read_tensorflow_weights
from electra_tf.tasks.optimizer import finetuning_optimizer

__all__ = ["EpochSelection", "train_seed", "read_json", "better", "write_best", "collapse_warning"]

_EPOCH = re.compile(r"^epoch-(\d+)$")
TRAINED = "trained.json"  # the seed's history once its last epoch's best weights are out


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
        log: called with one line per epoch (None: quiet), and one more for an epoch whose
            dev predictions are all one value while the labels are not (`job.collapse`).
        config: the run's `FinetuneConfig`, whose epochs and learning rate that line names
            (None: it names the settings only).

    `best_weights` holds the best epoch's weights once this fit has seen it; when the last
    epoch ends (all epochs, or patience) the model takes them and `_write_last` writes them.
    """

    def __init__(self, job, folder: Path, state: dict, patience: int = 0, log=None, config=None):
        super().__init__()
        self.job, self.folder, self.state = job, Path(folder), state
        self.patience, self.log, self.config = patience, log, config
        self.best_weights, self.best_epoch = None, None
        self.finished = False  # the last epoch's end set and wrote the best weights
        self._writer, self._failure = None, None
        self.rng_states = None  # a resumed PyTorch run's dropout generator (`_resume`)

    def on_train_batch_begin(self, batch, logs=None):
        # As `StepCheckpoint` does: after `fit` has drawn its data loader's seed from it.
        states, self.rng_states = self.rng_states, None
        if states:
            put_back_rng_states(states)

    def on_epoch_end(self, epoch, logs=None):
        bad = first_nonfinite_weight(self.model)
        if bad is not None:
            self.wait_for_checkpoint()
            raise ConfigError(
                f"Fine-tuning diverged in epoch {epoch + 1} (the weight {bad} is not finite); "
                f"{self.folder} keeps the last good epoch. Lower --set learning_rate=..."
            )
        scores = self.job.score(self.model, self.job.selection)
        entry = {"epoch": epoch + 1, "loss": float((logs or {}).get("loss", math.nan)), **scores}
        collapse = getattr(self.job, "collapse", lambda split: None)(self.job.selection)
        if collapse:
            entry["collapsed"] = True
        self.state["history"].append(entry)
        best = self.state.get("best")
        metric = self.job.main_metric
        improved = better(scores[metric], best[metric] if best else None)
        if improved:
            self.state["best"] = entry
            self.best_weights, self.best_epoch = self.model.get_weights(), entry["epoch"]
        since = entry["epoch"] - self.state["best"]["epoch"] if self.state.get("best") else 0
        stop = bool(self.patience) and since >= self.patience
        self.state["stopped"] = stop
        if stop or entry["epoch"] >= (self.params or {}).get("epochs", math.inf):
            self._write_last()
        else:
            self._write_epoch(entry["epoch"])
        if self.log:
            shown = ", ".join(f"{k} {v:.4f}" for k, v in scores.items())
            mark = " (best)" if since == 0 else ""
            self.log(f"epoch {entry['epoch']}: loss {entry['loss']:.4f}, dev {shown}{mark}")
            if collapse:
                self.log(collapse_warning(entry["epoch"], collapse, self.config))
        if stop:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.wait_for_checkpoint()

    def _write_epoch(self, epoch: int) -> None:
        """Writes epoch `epoch`'s checkpoint into its scratch folder; a thread hashes, syncs
        and publishes it while the next epoch trains (the previous one is published first).
        """
        self.wait_for_checkpoint()
        final = self.folder / f"epoch-{epoch:04d}"
        scratch = final.with_name(f".{final.name}.tmp")
        keep = {epoch, (self.state.get("best") or {}).get("epoch")}
        try:
            # The weights and the optimizer's two moments of each.
            ensure_space(self.folder, 3 * variables_bytes(self.model.weights))
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True)
            _write_checkpoint(self.model, scratch)
            (scratch / "state.json").write_text(json.dumps(self.state, indent=2) + "\n")
        except (OSError, tf.errors.OpError) as error:
            shutil.rmtree(scratch, ignore_errors=True)
            raise _unwritten(final, error) from None
        self._writer = threading.Thread(
            target=self._publish, args=(epoch, scratch, keep), name=f"publish {final.name}"
        )  # not a daemon: a process that ends while it publishes waits for it
        self._writer.start()

    def _write_last(self) -> None:
        """The last epoch's end: no resume checkpoint (Adam's moments are never read again);
        the best epoch's weights, which the model then takes, and `trained.json`, the history."""
        self.wait_for_checkpoint()
        if self.state.get("best") is not None:
            _best_weights(self.model, self.folder, self.state["best"], self)
        try:
            write_atomic(self.folder / TRAINED, json.dumps(self.state, indent=2) + "\n")
        except OSError as error:
            raise ConfigError(
                f"Could not write {self.folder / TRAINED} ({os_reason(error)}); free space "
                "or choose a writable --output-dir, then rerun: it resumes from the newest "
                "epoch checkpoint."
            ) from None
        self.finished = True

    def _publish(self, epoch: int, scratch: Path, keep: set) -> None:
        final = self.folder / f"epoch-{epoch:04d}"
        try:
            write_record(scratch)
            publish_folder(scratch, final)
        except BaseException as error:  # noqa: BLE001 - raised by `wait_for_checkpoint`
            shutil.rmtree(scratch, ignore_errors=True)
            self._failure = _unwritten(final, error)
            return
        for number, older in _epoch_folders(self.folder):
            if number < epoch and number not in keep:
                remove_folder(older)

    def wait_for_checkpoint(self) -> None:
        """Returns once the checkpoint in writing is published; raises its failure."""
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure


def collapse_warning(epoch: int, collapse: str, config=None) -> str:
    """The run log's sentence for an epoch whose dev predictions collapsed to one value.

    >>> collapse_warning(1, "every dev prediction is 'neg' while only 80% of dev rows are 'neg'")
    "epoch 1: every dev prediction is 'neg' while only 80% of dev rows are 'neg': the model \
has not learned to tell its inputs apart yet; try more epochs (--set epochs=...) or a higher \
learning rate (--set learning_rate=...)."
    """
    epochs = f" than {config.epochs}" if config is not None else ""
    rate = f" than {config.learning_rate:g}" if config is not None else ""
    return (
        f"epoch {epoch}: {collapse}: the model has not learned to tell its inputs apart yet; try "
        f"more epochs{epochs} (--set epochs=...) or a higher learning rate{rate} "
        "(--set learning_rate=...)."
    )


def _unwritten(final: Path, error: BaseException) -> ConfigError:
    return ConfigError(
        f"Could not write {final} ({os_reason(error)}); free space or choose a writable "
        "--output-dir. The previous epoch's checkpoint is untouched."
    )


def _write_checkpoint(model, scratch: Path) -> None:
    """An epoch's checkpoint: `tf.train.Checkpoint`'s on TensorFlow, `variables.npz`
    (`portable_checkpoint`) on JAX and PyTorch."""
    if backend.name() == "tensorflow":
        checkpoint_object(model).write(str(scratch / "ckpt"))
    else:
        write_variables(model, scratch)


def _read_checkpoint(model, child: Path) -> dict | None:
    """Reads an epoch's checkpoint into `model` (and its built optimizer): a portable one
    on any backend, TensorFlow's on TensorFlow. Returns torch's generator states on
    PyTorch (`EpochSelection` puts them back as the resumed fit's first step begins)."""
    if is_portable(child):
        read_variables(model, child)
        return read_rng_states(child)
    if backend.name() != "tensorflow":  # a run started on TensorFlow, resumed here
        read_tensorflow_weights(model, child, with_optimizer=True)
        return None
    checkpoint_object(model).read(str(child / "ckpt")).assert_existing_objects_matched()
    return None


def _best_weights(model, folder: Path, best: dict, selection) -> None:
    """Sets the best epoch's weights in `model`, writing `best.weights.npz` if it is not out:
    from this fit's memory, or from the best epoch's checkpoint (a resumed seed)."""
    written = best_written(folder, best)
    if selection is not None and selection.best_epoch == best["epoch"]:
        model.set_weights(selection.best_weights)
    elif written:
        read_best(model, best_file(folder))
    else:
        child = folder / f"epoch-{best['epoch']:04d}"
        reason = verify_record(child, required=("state.json",))
        if reason is not None:
            raise ConfigError(
                f"The best epoch's checkpoint {child} is not usable ({reason}); delete {folder} "
                "to fine-tune this seed again."
            )
        _read_checkpoint(model, child)
    if not written:
        write_best(model, folder, best)


def _resume(model, folder: Path, log) -> tuple[int, dict, dict | None]:
    """(epochs done, state, torch's generator states or None): from `trained.json` with its
    best weights out, else the newest epoch checkpoint that verifies; (0, fresh, None) if none."""
    state = read_json(folder / TRAINED)
    if state is not None and state.get("history") and best_written(folder, state.get("best")):
        if log:
            log(f"resuming after the last epoch ({folder / TRAINED})")
        return state["history"][-1]["epoch"], state, None
    if (folder / TRAINED).exists() and log:
        log(f"{folder / TRAINED} is not usable; resuming from the newest epoch checkpoint")
    for epoch, child in reversed(_epoch_folders(folder)):
        reason = verify_record(child, required=("state.json",))
        if reason is None:
            state = json.loads((child / "state.json").read_text())
            rng_states = _read_checkpoint(model, child)
            if log:
                log(f"resuming after epoch {epoch} ({child})")
            return epoch, state, rng_states
        target = child.with_name(child.name + ".corrupt")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(child, target)
        if log:
            log(f"{child} is not usable ({reason}); moved it to {target.name}")
    return 0, {"history": [], "best": None, "stopped": False}, None


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
        _remove_resume_files(folder)  # left by a kill right after result.json
        return done
    folder.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(seed)  # the head's initialization and dropout
    model = job.build(init, config)
    steps = math.ceil(job.rows() / config.batch_size) * config.epochs
    model.compile(
        optimizer=finetuning_optimizer(model, config, steps), **job.compile_arguments(model)
    )
    model.optimizer.build(model.trainable_variables)
    start, state, rng_states = _resume(model, folder, log)
    selection = None
    if start < config.epochs and not state.get("stopped"):
        selection = EpochSelection(job, folder, state, config.patience, log, config)
        selection.rng_states = rng_states
        try:
            job.fit(model, config, seed, initial_epoch=start, callbacks=[selection])
        except BaseException:
            with contextlib.suppress(ConfigError):  # the first error is the one to tell
                selection.wait_for_checkpoint()
            raise
    if state.get("best") is None:
        raise ConfigError(f"Seed {seed} finished no epoch; see {folder}.")
    if selection is None or not selection.finished:
        _best_weights(model, folder, state["best"], selection)
    result = {
        "seed": seed,
        "best_epoch": state["best"]["epoch"],
        "epochs_run": len(state["history"]),
        "history": state["history"],
        "train_loss": [entry["loss"] for entry in state["history"]],
    }
    # The chosen split was scored with these weights when they were best; the others now.
    chosen = {k: v for k, v in state["best"].items() if k not in ("epoch", "loss", "collapsed")}
    for split in job.splits():
        result[split] = chosen if split == job.selection else job.score(model, split)
    write_atomic(folder / "result.json", json.dumps(result, indent=2) + "\n")
    _remove_resume_files(folder)
    if trained is not None:
        trained["model"] = model
    return result


def _remove_resume_files(folder: Path) -> None:
    """Once `result.json` is out: the checkpoints, `trained.json`, a kill's scratch of either."""
    for _, child in _epoch_folders(folder):
        remove_folder(child)
    for scratch in folder.glob(".epoch-*.tmp"):
        shutil.rmtree(scratch, ignore_errors=True)
    (folder / f".{TRAINED}.tmp").unlink(missing_ok=True)
    (folder / TRAINED).unlink(missing_ok=True)
