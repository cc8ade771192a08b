"""Distribution strategies by name, and the loop that runs `train_step` where `fit` cannot.

Keras 3's `fit` works under the default strategy, `MirroredStrategy` and
`TPUStrategy`. Under `MultiWorkerMirroredStrategy` it fails while reducing
the step's logs (keras-team/keras#20585: `strategy.reduce(..., axis=0)` on
scalar per-replica values). `distributed_fit` is the replacement: the same
`model.train_step` under `strategy.run`, logs reduced as scalars, and the
same Keras callbacks (progress bar, checkpoints, TensorBoard) called with the
same arguments `fit` would pass. `ElectraPretrainer.fit` switches to it by
itself under a multi-worker strategy.
"""

from __future__ import annotations

import json
import os

import keras
import tensorflow as tf

from electra_tf.config import ConfigError

__all__ = [
    "make_strategy",
    "configure_cpu_devices",
    "is_multi_worker",
    "worker_info",
    "distributed_fit",
    "prepare_devices",
    "exact_gradient_sums",
]


def configure_cpu_devices(count: int) -> None:
    """Splits the host CPU into `count` logical devices (before TensorFlow uses any device)."""
    if count <= 1:
        return
    cpus = tf.config.list_physical_devices("CPU")
    current = tf.config.get_logical_device_configuration(cpus[0])
    if current and len(current) == count:
        return
    try:
        tf.config.set_logical_device_configuration(
            cpus[0], [tf.config.LogicalDeviceConfiguration()] * count
        )
    except RuntimeError:
        raise ConfigError(
            f"train.cpu_devices={count} must be set before TensorFlow initializes its devices; "
            "set it at the start of the process."
        ) from None


def exact_gradient_sums() -> None:
    """Turns Grappler's memory optimizer off for the functions this thread traces next.

    On a CPU its one rewrite that changes results turns large AddN nodes (the sums of a
    variable's gradients) into AssignAdds on a temporary variable, applied in the order
    their inputs arrive. TensorFlow's executor runs each kernel inline or on its pool by a
    cost estimate that decays from 1e8 cycles by 0.9 per call, so from about the 90th step
    that order, and the sums' last bits, changed between runs (docs/results/durability.md).
    A plain AddN adds its inputs in one fixed order. Call before Keras traces the train function
    (`ElectraPretrainer.fit` does); it changes only this thread's function options."""
    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
    from tensorflow.python.eager import context

    options = context.context().function_call_options
    config = config_pb2.ConfigProto()
    config.ParseFromString(options.config_proto_serialized)
    config.graph_options.rewrite_options.memory_optimization = (
        rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
    )
    options.config_proto_serialized = config


def prepare_devices(train) -> None:
    """What must come before TensorFlow's first op in a pre-training process: the
    `train.cpu_devices` logical CPUs. `make_strategy` calls it; a caller that runs
    TensorFlow first (a warm start reading its weights) calls it before that."""
    if keras.config.backend() == "tensorflow":
        configure_cpu_devices(train.cpu_devices)


def make_strategy(train) -> tf.distribute.Strategy:
    """The `tf.distribute` strategy named by `train.strategy`.

    - default: one device;
    - mirrored: all local GPUs, or `train.cpu_devices` logical CPUs when > 1;
    - multi_worker: `MultiWorkerMirroredStrategy`, cluster from `TF_CONFIG`;
    - tpu: `TPUStrategy` on `train.tpu` ("" = the local TPU).
    """
    prepare_devices(train)
    if train.strategy == "default":
        return tf.distribute.get_strategy()
    if train.strategy == "mirrored":
        if not tf.config.list_logical_devices("GPU") and train.cpu_devices > 1:
            devices = [d.name for d in tf.config.list_logical_devices("CPU")]
            return tf.distribute.MirroredStrategy(devices=devices)
        return tf.distribute.MirroredStrategy()
    if train.strategy == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ConfigError(
                "train.strategy=multi_worker needs the TF_CONFIG environment variable "
                "(the cluster and this worker's task); set it on every worker."
            )
        options = tf.distribute.experimental.CommunicationOptions(
            timeout_seconds=train.collective_timeout
        )
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if train.strategy == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=train.tpu)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ConfigError(f"Unknown train.strategy {train.strategy!r}.")


def is_multi_worker(strategy) -> bool:
    """True for a `MultiWorkerMirroredStrategy` spanning more than one worker."""
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return False
    return strategy.extended._in_multi_worker_mode()  # noqa: SLF001 - no public accessor


def worker_info() -> tuple[bool, int]:
    """(is_chief, worker index) from TF_CONFIG; (True, 0) without one."""
    config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
    task = config.get("task", {})
    kind, index = task.get("type", "worker"), int(task.get("index", 0))
    cluster = config.get("cluster", {})
    if "chief" in cluster:
        return kind == "chief", index
    return kind in ("worker", "chief") and index == 0, index


def _scalar(value):
    return float(value.numpy()) if hasattr(value, "numpy") else float(value)


def _traced_steps(model, strategy):
    """`one_step(iterator)`: `model.train_step` on the next global batch in `strategy.run`,
    its logs averaged over replicas; traced once per objective state (two-stage switches
    mid-run)."""

    def make_step():
        # Unconverted, as Keras's own fit traces its step: the step is plain `keras.ops` code
        # that JAX's tracer also runs, so AutoGraph has nothing to convert, and converting
        # it cost each worker about 4 CPU-seconds of its first step (same weights after).
        @tf.function(autograph=False)
        def step(iterator):
            logs = strategy.run(model.train_step, args=(next(iterator),))
            return {
                name: strategy.reduce(tf.distribute.ReduceOp.MEAN, value, axis=None)
                for name, value in logs.items()
            }

        return step

    steps = {}

    def one_step(iterator):
        key = model.objective.trace_key() if hasattr(model, "objective") else ()
        if key not in steps:
            steps[key] = make_step()
        return steps[key](iterator)

    return one_step


def distributed_fit(
    model, x, *, epochs=1, steps_per_epoch=None, callbacks=None, verbose=1, initial_epoch=0
):
    """`fit` for strategies Keras 3's `fit` cannot run: the same `train_step` in `strategy.run`.

    Args:
        model: a compiled Keras model built in `strategy.scope()`.
        x: a `tf.data.Dataset` of global batches, or a distributed dataset.
        epochs, steps_per_epoch, callbacks, verbose, initial_epoch: as in `fit`
            (`steps_per_epoch` is required for an infinite dataset).

    Returns:
        The `keras.callbacks.History`.
    """
    strategy = model.distribute_strategy
    if isinstance(x, tf.data.Dataset):
        x = strategy.experimental_distribute_dataset(x)
    is_chief, _ = worker_info()
    history = keras.callbacks.History()
    callback_list = keras.callbacks.CallbackList(
        list(callbacks or []) + [history],
        add_history=False,
        add_progbar=bool(verbose) and is_chief,
        model=model,
        verbose=verbose if is_chief else 0,
        epochs=epochs,
        steps=steps_per_epoch,
    )

    one_step = _traced_steps(model, strategy)
    model.stop_training = False
    callback_list.on_train_begin()
    iterator = iter(x)
    logs = {}
    for epoch in range(initial_epoch, epochs):
        model.reset_metrics()
        callback_list.on_epoch_begin(epoch)
        step = 0
        while steps_per_epoch is None or step < steps_per_epoch:
            callback_list.on_train_batch_begin(step)
            try:
                logs = {name: _scalar(v) for name, v in one_step(iterator).items()}
            except (StopIteration, tf.errors.OutOfRangeError):
                break
            callback_list.on_train_batch_end(step, logs)
            step += 1
            if model.stop_training:
                break
        callback_list.on_epoch_end(epoch, dict(logs))
        if model.stop_training:
            break
    callback_list.on_train_end(dict(logs))
    return history
