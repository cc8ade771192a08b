"""The checkpoint file of a run on JAX: every variable's value, by position, in one `.npz`.

`tf.train.Checkpoint` saves TensorFlow objects; on JAX the model's variables hold JAX
arrays, so a step checkpoint there (`Checkpointer`) holds `variables.npz` in place of
`ckpt.*`: the values of the pretrainer's trainable, non-trainable (dropout seed states,
the evaluation counter) and optimizer variables (the step counter, the moments), in the
order the model creates them, which is the same on every backend. The same folder also
holds `config.json`, `state.json` and `record.json`, so it verifies, resumes and prunes as
TensorFlow's does, and `load_pretrainer` reads it on any backend (so a JAX run exports on
TensorFlow). A value whose dtype differs by backend (a seed state: uint32 on JAX, int64 on
TensorFlow; the step counter) is cast to the reading variable's dtype.

On PyTorch, Keras's dropout draws from torch's global generator (its seed generators'
states do not move), so a checkpoint written there also holds that generator's state
(`torch_rng`, and `torch_cuda_rng.N` per GPU), which a resume puts back as its first
step begins (`read_rng_states`, then `put_back_rng_states` in `StepCheckpoint`: Keras's
data loader draws a seed from that generator as `fit` starts), so the resumed run draws
the masks the uninterrupted one drew.

Nothing here imports TensorFlow.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import keras
import numpy as np
from keras import ops

from electra_tf.config import ConfigError

__all__ = [
    "VARIABLES",
    "is_portable",
    "write_variables",
    "read_variables",
    "write_weights",
    "read_weights",
    "readable_here",
    "read_rng_states",
    "put_back_rng_states",
]

#: The file of a portable checkpoint.
VARIABLES = "variables.npz"
_PATHS = "paths"
_TORCH_RNG, _TORCH_CUDA_RNG = "torch_rng", "torch_cuda_rng"


def _groups(model, with_optimizer: bool = True) -> dict:
    """The pretrainer's variables by group, in creation order."""
    groups = {
        "trainable": model.trainable_variables,
        "non_trainable": model.non_trainable_variables,
    }
    optimizer = getattr(model, "optimizer", None)
    if with_optimizer and optimizer is not None:
        groups["optimizer"] = optimizer.variables
    return groups


def is_portable(folder) -> bool:
    """Whether the checkpoint `folder` holds a portable `variables.npz`."""
    return (Path(folder) / VARIABLES).is_file()


def readable_here(folder, backend: str) -> bool:
    """Whether this backend resumes from the checkpoint `folder`: a portable one on any
    backend; one of `tf.train.Checkpoint` on TensorFlow, and on JAX or PyTorch where
    TensorFlow is installed to read it (`tensorflow_checkpoint`, the optimizer's state
    included); else `ConfigError` in one sentence, which says how to convert it."""
    if is_portable(folder) or backend == "tensorflow" or find_spec("tensorflow") is not None:
        return True
    raise ConfigError(
        f"Checkpoint {folder} was written by a run on TensorFlow (ckpt.*) and TensorFlow is "
        f"not installed here, so the {backend} backend cannot resume it; convert the run "
        "first on a machine with TensorFlow (electra-tf import --tensorflow-run RUN --out "
        "NEW), then resume NEW here (--output-dir NEW)."
    )


def write_variables(model, folder) -> Path:
    """Writes the values of `model`'s variables (and its optimizer's) to `folder/variables.npz`."""
    path = Path(folder) / VARIABLES
    write_weights(model, path, with_optimizer=True)
    return path


def write_weights(model, path, with_optimizer: bool = False) -> None:
    """Writes the values of `model`'s variables to the `.npz` file `path`: trainable and
    non-trainable, with the optimizer's only if `with_optimizer` (a model's weights alone
    are a third of a checkpoint under Adam)."""
    arrays, paths = {}, {}
    for group, variables in _groups(model, with_optimizer).items():
        paths[group] = [variable.path for variable in variables]
        for index, variable in enumerate(variables):
            arrays[f"{group}.{index:05d}"] = np.asarray(ops.convert_to_numpy(variable.value))
    arrays[_PATHS] = np.array(json.dumps(paths))
    if with_optimizer:
        arrays.update(_rng_states())
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def _mismatch(source, what: str) -> ConfigError:
    where = f"its config is in {Path(source) / 'config.json'}"
    if Path(source).suffix == ".npz":
        where = f"delete {source} and rerun"
    return ConfigError(f"Checkpoint {source} does not match this model ({what}); {where}.")


def read_variables(model, folder, with_optimizer: bool = True) -> None:
    """Assigns the values in `folder/variables.npz` to `model`'s variables (by position,
    shapes checked; dtypes cast to the model's).

    Raises:
        ConfigError: the file lists another number of variables, or another shape, than
            the model has (in one sentence, naming the variable).
    """
    read_weights(model, Path(folder) / VARIABLES, with_optimizer, source=folder)


def read_weights(model, path, with_optimizer: bool = False, source=None) -> None:
    """Assigns the values in the `.npz` file `path` (`write_weights`) to `model`'s
    variables, as `read_variables` does; `source` names it in a mismatch (default `path`)."""
    source = path if source is None else source
    with np.load(path) as data:
        paths = json.loads(str(data[_PATHS]))
        for group, variables in _groups(model, with_optimizer).items():
            saved = paths.get(group, [])
            if len(saved) != len(variables):
                counts = f"{len(saved)} {group} variables, the model {len(variables)}"
                raise _mismatch(source, counts)
            for index, variable in enumerate(variables):
                value = data[f"{group}.{index:05d}"]
                if tuple(value.shape) != tuple(variable.shape):
                    raise _mismatch(
                        source,
                        f"{saved[index]} has shape {list(value.shape)}, the model's "
                        f"{variable.path} {list(variable.shape)}",
                    )
                variable.assign(value.astype(variable.dtype))


def _rng_states() -> dict:
    """torch's global generator states on PyTorch (CPU, then each GPU's), else none."""
    if keras.config.backend() != "torch":
        return {}
    import torch

    states = {_TORCH_RNG: torch.get_rng_state().numpy()}
    if torch.cuda.is_available():
        for index, state in enumerate(torch.cuda.get_rng_state_all()):
            states[f"{_TORCH_CUDA_RNG}.{index}"] = state.numpy()
    return states


def read_rng_states(folder) -> dict | None:
    """On PyTorch, the global generator states that `folder/variables.npz` holds (a
    checkpoint written on PyTorch); else None. `put_back_rng_states` sets them."""
    if keras.config.backend() != "torch":
        return None
    with np.load(Path(folder) / VARIABLES) as data:
        names = [name for name in data.files if name.startswith(_TORCH_RNG)]
        return {name: data[name] for name in names} or None


def put_back_rng_states(states: dict) -> None:
    """Sets torch's global generators to `states` (`read_rng_states`); GPU states only
    where this machine has as many GPUs as the run that wrote them."""
    import torch

    torch.set_rng_state(torch.from_numpy(states[_TORCH_RNG]))
    cuda = sorted(name for name in states if name.startswith(_TORCH_CUDA_RNG))
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([torch.from_numpy(states[name]) for name in cuda])
