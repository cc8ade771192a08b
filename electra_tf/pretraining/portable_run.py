"""What a pre-training run does differently on JAX: its checks, and its devices.

`run_pretraining` is one code for every backend. On JAX the step is Keras's stateless
train step (`portable_step`), the checkpoints are `variables.npz` (`portable_checkpoint`),
and the devices are Keras's: `train.strategy=mirrored` splits each batch over every
device (`keras.distribution.DataParallel`; on a CPU, `--cpu-devices N` makes N), and
`default` trains on one. `tf.distribute`'s other strategies are TensorFlow's: refused in
one sentence before anything is written (as is an objective not written in `keras.ops`;
today all are). mixed_float16's dynamic loss scaling runs on JAX too (`portable_step`),
not on PyTorch.
"""

from __future__ import annotations

import keras

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.pretraining.objectives import OBJECTIVES

__all__ = ["check_backend", "set_distribution"]

#: The train.strategy values a run off TensorFlow takes.
PORTABLE_STRATEGIES = ("default", "mirrored")


def check_backend(config: ElectraConfig) -> None:
    """One sentence, before anything is written, for what this backend cannot run yet."""
    name = keras.config.backend()
    if name == "tensorflow":
        return
    objective, train = config.objective.name, config.train
    portable = sorted(n for n, kind in OBJECTIVES.items() if kind.portable)
    if objective in OBJECTIVES and objective not in portable:
        raise ConfigError(
            f"objective.name={objective!r} trains on the TensorFlow backend only for now; on "
            f"{name} choose one of {', '.join(portable)}, or pass --backend tensorflow."
        )
    if train.strategy not in PORTABLE_STRATEGIES:
        raise ConfigError(
            f"train.strategy={train.strategy!r} runs on the TensorFlow backend only; on {name} "
            "train with the default or mirrored strategy, or pass --backend tensorflow."
        )
    if train.mixed_precision == "mixed_float16" and name != "jax":
        raise ConfigError(
            f"train.mixed_precision='mixed_float16' runs on TensorFlow and JAX only; on {name} "
            "train in float32 or mixed_bfloat16, or pass --backend jax or tensorflow."
        )
    if train.mixed_precision == "mixed_float16" and not config.model.dropout and _jax_on_cpu():
        raise ConfigError(
            "train.mixed_precision='mixed_float16' with model.dropout=0 does not compile on "
            "JAX's CPU backend (its float16 attention kernel is GPU-only); train in float32 or "
            "mixed_bfloat16 there, or set model.dropout above 0."
        )


def _jax_on_cpu() -> bool:
    """Whether JAX runs on its CPU backend (no GPU or TPU)."""
    import jax

    return jax.default_backend() == "cpu"


def set_distribution(train) -> None:
    """Keras's distribution for this run on JAX: the batch split over every device
    (`DataParallel`) for train.strategy=mirrored, none (one device) for default.

    Raises:
        ConfigError: the batch does not split evenly over the devices.
    """
    if train.strategy != "mirrored":
        keras.distribution.set_distribution(None)
        return
    devices = keras.distribution.list_devices()
    if train.batch_size % len(devices):
        raise ConfigError(
            f"train.batch_size={train.batch_size} does not split over the {len(devices)} "
            "devices of train.strategy=mirrored; choose a multiple of that count."
        )
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
