"""A TensorFlow run's checkpoint rewritten as `variables.npz`, the form every backend reads.

`electra-tf import --tensorflow-run RUN --out NEW` runs this on a machine with TensorFlow,
so that a JAX or PyTorch machine without it can `--init` from NEW
(`tensorflow_checkpoint` reads `ckpt.*` directly where TensorFlow is installed). It stands
above `checkpoint` and `portable_checkpoint`, which it uses.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.io.durable import write_record
from electra_tf.pretraining.checkpoint import find_checkpoint, load_pretrainer
from electra_tf.pretraining.portable_checkpoint import write_variables

__all__ = ["convert_to_portable"]


def convert_to_portable(path, out) -> Path:
    """Rewrites the checkpoint at `path` (a run or `step-N` folder written on TensorFlow) as a
    portable one, `out/checkpoints/step-N/variables.npz` with its config and state, which
    every backend reads (run on a machine with TensorFlow). Returns the new step folder."""
    folder = find_checkpoint(path)
    if folder is None:
        raise ConfigError(f"No checkpoint found at {path} (expected a step-N folder or a run).")
    target = Path(out) / "checkpoints" / folder.name
    if Path(out).exists() and any(Path(out).iterdir()):
        raise ConfigError(f"{out} is not empty; give --out a new or empty folder.")
    model = load_pretrainer(folder)
    target.mkdir(parents=True)
    for name in ("config.json", "state.json"):
        shutil.copyfile(folder / name, target / name)
    shutil.copyfile(folder / "config.json", Path(out) / "config.json")
    write_variables(model, target)
    write_record(target)
    return target
