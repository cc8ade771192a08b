"""What a pre-training run does off TensorFlow (JAX, PyTorch): its checks, and its devices.

`run_pretraining` is one code for every backend. Off TensorFlow the checkpoints are
`variables.npz` (`portable_checkpoint`); on JAX the step is Keras's stateless train step
(`portable_step`), and the devices are Keras's: `train.strategy=mirrored` splits each
batch over every device (`keras.distribution.DataParallel`; on a CPU, `--cpu-devices N`
makes N), and `default` trains on one. On JAX, `multi_worker` does the same over the
devices of several processes (`jax_cluster`: the cluster from TF_CONFIG), and `tpu` over
the TPU's devices (refused in one sentence on other devices). On PyTorch a run trains on
one device (`default`, in float32 or mixed_bfloat16): Keras's distribution API is JAX's.
A strategy a backend lacks is refused in one sentence before anything is written (as is
an objective not written in `keras.ops`; today all are). mixed_float16's dynamic loss
scaling runs on JAX too (`portable_step`), not on PyTorch.
"""

from __future__ import annotations

import keras

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.pretraining.objectives import OBJECTIVES

__all__ = ["check_backend", "set_distribution", "worker"]

#: The train.strategy values a run off TensorFlow takes, by backend (PyTorch: one device).
JAX_STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")
STRATEGIES = {"jax": JAX_STRATEGIES, "torch": ("default",)}


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
    strategies = STRATEGIES.get(name, ("default",))
    if train.strategy not in strategies:
        raise ConfigError(
            f"train.strategy={train.strategy!r} runs on the TensorFlow and JAX backends only; "
            f"on {name} train with the {' or '.join(strategies)} strategy, or pass --backend jax."
        )
    if train.strategy == "multi_worker" and name == "jax":
        from electra_tf.pretraining.jax_cluster import start_cluster

        start_cluster(train)  # before JAX sees a device (the check below looks at them)
    float16_on_cpu = train.mixed_precision == "mixed_float16" and name == "jax" and _jax_on_cpu()
    if float16_on_cpu and not config.model.dropout:
        raise ConfigError(
            "train.mixed_precision='mixed_float16' with model.dropout=0 does not compile on "
            "JAX's CPU backend (its float16 attention kernel is GPU-only); train in float32 or "
            "mixed_bfloat16 there, or set model.dropout above 0."
        )


def _jax_on_cpu() -> bool:
    """Whether JAX runs on its CPU backend (no GPU or TPU)."""
    import jax

    return jax.default_backend() == "cpu"


def _devices(train) -> list:
    """The devices train.strategy splits the batch over: this process's (mirrored), every
    process's (multi_worker, once `check_backend` joined the cluster) or the TPU's."""
    if train.strategy == "mirrored":
        return keras.distribution.list_devices()
    import jax

    from electra_tf.pretraining.jax_cluster import tpu_devices

    return jax.devices() if train.strategy == "multi_worker" else tpu_devices(jax.devices())


def set_distribution(train) -> None:
    """Keras's distribution for this run off TensorFlow: the batch split over the devices
    of train.strategy (`DataParallel`; `_devices`), none (one device) for default.

    Raises:
        ConfigError: the batch does not split evenly over the devices, or tpu without TPUs.
    """
    if train.strategy == "default":
        keras.distribution.set_distribution(None)
        return
    devices = _devices(train)
    if train.batch_size % len(devices):
        raise ConfigError(
            f"train.batch_size={train.batch_size} does not split over the {len(devices)} "
            f"devices of train.strategy={train.strategy}; choose a multiple of that count."
        )
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))


def worker(train) -> tuple[bool, int]:
    """(is_chief, process index) of a run off TensorFlow: JAX's process index under
    multi_worker (process 0 is the chief), else (True, 0)."""
    if train.strategy != "multi_worker":
        return True, 0
    import jax

    return jax.process_index() == 0, jax.process_index()
