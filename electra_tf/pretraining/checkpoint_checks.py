"""What makes a checkpoint folder trustworthy: finite weights, and files that verify.

`verify_checkpoint` is what `electra_tf.pretraining.checkpoint` asks of every
folder before resuming from, exporting or loading it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.io.durable import RECORD, verify_record
from electra_tf.pretraining.portable_checkpoint import VARIABLES

__all__ = [
    "STEP_NAME",
    "step_folders",
    "refuse_suspect",
    "READ_ERRORS",
    "first_nonfinite_weight",
    "first_nonfinite_slot",
    "verify_checkpoint",
]

#: A checkpoint folder's name: `step-` and the zero-padded step.
STEP_NAME = re.compile(r"^step-(\d+)$")
#: What reading a damaged checkpoint raises (pybind turns a short read into IndexError).
READ_ERRORS = (tf.errors.OpError, ValueError, IndexError, KeyError, RuntimeError)
_ITERATIONS = "_iterations/.ATTRIBUTES/VARIABLE_VALUE"


def first_nonfinite_weight(model) -> str | None:
    """The path of the first weight of `model` holding a NaN or an infinity, or None."""
    for variable in model.weights:
        value = variable.numpy()
        if np.issubdtype(value.dtype, np.floating) and not np.all(np.isfinite(value)):
            return variable.path
    return None


def first_nonfinite_slot(model) -> str | None:
    """The path of the first optimizer variable of `model` (a moment, the loss scale)
    holding a NaN or an infinity, or None."""
    optimizer = getattr(model, "optimizer", None)
    for variable in getattr(optimizer, "variables", ()):
        value = np.asarray(variable.numpy())
        if np.issubdtype(value.dtype, np.floating) and not np.all(np.isfinite(value)):
            return variable.path
    return None


def _read_state(folder: Path) -> tuple[dict | None, str | None]:
    for name in ("state.json", "config.json"):
        path = folder / name
        if not path.is_file():
            return None, f"it has no {name}"
        try:
            value = json.loads(path.read_text())
        except (OSError, ValueError):
            return None, f"its {name} is not readable JSON"
        if name == "state.json":
            state = value
    if not isinstance(state, dict) or not isinstance(state.get("step"), int):
        return None, "its state.json names no step"
    return state, None


def step_folders(folder: Path) -> list[tuple[int, Path]]:
    """(step, folder) of the `step-N` folders in `folder`, oldest first."""
    if not folder.is_dir():
        return []
    return sorted(
        (int(m.group(1)), child)
        for child in folder.iterdir()
        if (m := STEP_NAME.match(child.name)) and child.is_dir()
    )


def batches_read(folder) -> int:
    """How many batches the run had read at checkpoint `folder`, its data's position (its
    `state.json`'s `batches`; checkpoints written before it was kept give their step)."""
    state = json.loads((Path(folder) / "state.json").read_text())
    return int(state.get("batches", state["step"]))


def _suspect(folder: Path) -> str | None:
    """Why `folder` was suspect when written (its `state.json`), or None."""
    try:
        return json.loads((folder / "state.json").read_text()).get("suspect")
    except (OSError, ValueError, AttributeError):
        return "its state.json does not read"


def refuse_suspect(folder: Path) -> None:
    """One sentence when `folder` was written while its run was in trouble."""
    suspect = _suspect(folder)
    if not suspect:
        return
    steps = step_folders(folder.parent)
    earlier = [f for _, f in steps if f.name < folder.name and not _suspect(f)]
    instead = (
        f"name an earlier one ({earlier[-1]}) instead" if earlier else "no earlier one is good"
    )
    raise ConfigError(
        f"Checkpoint {folder} was written while its run was in trouble ({suspect}); {instead}, "
        "or pass --allow-suspect to export it anyway."
    )


_UNRECORDED = {}  # (folder, sizes and times) -> verdict of `_verify_unrecorded`


def _verify_unrecorded(folder: Path, step: int) -> str | None:
    """Reads every tensor of a checkpoint without a record; its step must be `step`."""
    if (folder / VARIABLES).is_file():  # written on JAX: always with a record
        return f"it has no {RECORD}"
    if not (folder / "ckpt.index").is_file():
        return "it has no ckpt.index"
    files = sorted(folder.iterdir())
    key = (
        str(folder.resolve()),
        tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files),
    )
    if key not in _UNRECORDED:
        what = f"it has no {RECORD}, and"
        try:
            reader = tf.train.load_checkpoint(str(folder / "ckpt"))
            names = sorted(reader.get_variable_to_shape_map())
            for name in names:  # each read checks the tensor's size and checksum
                reader.get_tensor(name)
            counters = [int(reader.get_tensor(n)) for n in names if n.endswith(_ITERATIONS)]
            verdict = None
            if counters and max(counters) != step:
                verdict = (
                    f"{what} its state.json says step {step} where its optimizer is at step "
                    f"{max(counters)}"
                )
        except READ_ERRORS as error:
            reason = getattr(error, "message", str(error)).splitlines()[0][:160]
            verdict = f"{what} its data do not match its index ({reason})"
        _UNRECORDED[key] = verdict
    return _UNRECORDED[key]


def verify_checkpoint(folder) -> str | None:
    """Why `folder` is not a usable checkpoint (one phrase), or None when it verifies.

    A checkpoint with a `record.json` must match it file by file. One without (written
    before records existed, or whose record was deleted) must read: every tensor its
    index lists, at the size and checksum the index records, and an optimizer step equal
    to its `state.json`'s. A `step-N` folder's state must say step N.
    """
    folder = Path(folder)
    state, reason = _read_state(folder)
    if reason:
        return reason
    named = STEP_NAME.match(folder.name)
    if named and int(named.group(1)) != state["step"]:
        return f"its state.json says step {state['step']} but its name says {int(named.group(1))}"
    if (folder / RECORD).exists():
        data = VARIABLES if (folder / VARIABLES).is_file() else "ckpt.index"  # JAX's or TF's
        return verify_record(folder, required=(data, "state.json"))
    return _verify_unrecorded(folder, state["step"])
