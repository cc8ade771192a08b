"""Several processes (hosts) training one run on JAX, and the devices of a TPU run there.

`train.strategy=multi_worker` on JAX reads the cluster the way the TensorFlow path does:
from TF_CONFIG (`cluster.worker` host:port list, an optional `cluster.chief`, and
`task.type` / `task.index`), so one launch recipe serves both backends; Keras's own
variables (KERAS_DISTRIBUTION_JOB_ADDRESSES, KERAS_DISTRIBUTION_NUM_PROCESSES,
KERAS_DISTRIBUTION_PROCESS_ID, the ones `keras.distribution.initialize` reads) win when
set. Process 0 (the chief, else worker 0) is JAX's coordinator, at its own address.

`start_cluster` calls `jax.distributed.initialize` itself, not `keras.distribution.
initialize`, to bound its wait by `train.collective_timeout` (Keras passes no timeout:
JAX's default is 300 s). JAX's own failure to connect aborts the process (SIGABRT, no
Python exception), so before it the processes meet on the coordinator's port themselves:
process 0 listens there until every other process has knocked once and said its index
(`gather_workers`), and each other process knocks until it answers
(`wait_for_coordinator`); either says in one sentence who did not come within the
timeout. Those connections stay open for the whole run: `worker_watch` watches them, so
that a process lost mid-run stops the others in one sentence (JAX's heartbeat timeout is
train.collective_timeout too). `keras.distribution.DataParallel` over every
process's devices then splits each global batch: Keras's JAX trainer rebatches the
`tf.data` stream to `batch / processes` rows and keeps this process's shard of each global
batch, so the processes together see the batches one process would.

Nothing here imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time

from electra_tf.config import ConfigError
from electra_tf.pretraining.worker_watch import Watch, install, watch_socket

__all__ = ["Cluster", "read_cluster", "start_cluster", "tpu_devices"]

_KERAS = ("KERAS_DISTRIBUTION_JOB_ADDRESSES", "KERAS_DISTRIBUTION_NUM_PROCESSES")
_PROCESS_ID = "KERAS_DISTRIBUTION_PROCESS_ID"


@dataclasses.dataclass(frozen=True)
class Cluster:
    """The processes of a multi-worker run: their addresses (the coordinator first), this
    process's index among them, and where that was read."""

    addresses: tuple[str, ...]
    process_id: int
    source: str

    @property
    def num_processes(self) -> int:
        return len(self.addresses)

    @property
    def coordinator(self) -> str:
        return self.addresses[0]


def _bad(source: str, what: str) -> ConfigError:
    return ConfigError(
        f"{source} {what}; give every worker the same cluster and its own task (see "
        "docs/results/backends.md, Multi-worker on JAX)."
    )


def _check_address(source: str, address) -> str:
    host, _, port = str(address).rpartition(":")
    if not host or not port.isdigit():
        raise _bad(source, f"names {address!r}, which is not host:port")
    return str(address)


def _from_tf_config(text: str) -> Cluster:
    """TF_CONFIG's cluster (chief first, then the workers) and this task's place in it."""
    try:
        config = json.loads(text)
    except ValueError as error:
        raise _bad("TF_CONFIG", f"is not JSON ({error})") from None
    cluster, task = config.get("cluster") or {}, config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict):
        raise _bad("TF_CONFIG", "needs a cluster object and a task object")
    chief, workers = list(cluster.get("chief") or []), list(cluster.get("worker") or [])
    others = sorted(set(cluster) - {"chief", "worker"})
    if others or len(chief) > 1 or not chief + workers:
        raise _bad("TF_CONFIG", "on JAX needs cluster.worker (and at most one chief) only")
    kind, index = task.get("type", "worker"), task.get("index", 0)
    members = {"chief": chief, "worker": workers}.get(kind)
    if members is None or not isinstance(index, int) or not 0 <= index < len(members):
        raise _bad("TF_CONFIG", f"has task {kind}/{index}, which is not in its cluster")
    addresses = tuple(_check_address("TF_CONFIG", a) for a in chief + workers)
    return Cluster(addresses, index + (len(chief) if kind == "worker" else 0), "TF_CONFIG")


def _from_keras(environ) -> Cluster:
    """Keras's variables: every address, or the coordinator's and the process count."""
    source = "KERAS_DISTRIBUTION_*"
    addresses = [a.strip() for a in environ.get(_KERAS[0], "").split(",") if a.strip()]
    try:
        count = int(environ.get(_KERAS[1]) or len(addresses))
        process_id = int(environ[_PROCESS_ID])
    except (KeyError, ValueError):
        raise _bad(source, f"need {_KERAS[0]}, and whole numbers in {_PROCESS_ID}") from None
    if not addresses or (len(addresses) > 1 and len(addresses) != count):
        raise _bad(source, f"list {len(addresses)} addresses for {count} processes")
    if not 0 <= process_id < count:
        raise _bad(source, f"give process {process_id} of {count}")
    first = _check_address(source, addresses[0])
    return Cluster((first, *addresses[1:]) + ("",) * (count - len(addresses)), process_id, source)


def read_cluster(environ=None) -> Cluster:
    """This run's cluster: Keras's variables when set, else TF_CONFIG.

    Raises:
        ConfigError: neither is set, or what is set does not describe a cluster holding
            this process (one sentence naming the variable).
    """
    environ = os.environ if environ is None else environ
    if any(name in environ for name in (*_KERAS, _PROCESS_ID)):
        return _from_keras(environ)
    if environ.get("TF_CONFIG"):
        return _from_tf_config(environ["TF_CONFIG"])
    raise ConfigError(
        "train.strategy=multi_worker needs the cluster: the TF_CONFIG environment variable "
        f"(as on TensorFlow) or {_KERAS[0]}, {_KERAS[1]} and {_PROCESS_ID}; set it on every "
        "worker."
    )


def wait_for_coordinator(cluster: Cluster, timeout: float, connect=socket.create_connection):
    """Once the coordinator's port accepts a connection, says this process's index on it and
    returns it (kept open: `worker_watch` watches it); ConfigError after `timeout`."""
    host, _, port = cluster.coordinator.rpartition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            connection = connect((host.strip("[]"), int(port)), timeout=min(5.0, timeout))
            connection.sendall(f"{cluster.process_id}\n".encode())
            return connection
        except OSError as error:
            if time.monotonic() >= deadline:
                raise ConfigError(
                    f"Process {cluster.process_id} could not reach the coordinator "
                    f"{cluster.coordinator} (process 0, from {cluster.source}) within "
                    f"{timeout:g} s ({error.strerror or error}); start process 0 too, check "
                    "the address, or raise train.collective_timeout."
                ) from None
        time.sleep(0.2)


def _listen(port: int) -> socket.socket:
    """A listening socket on `port` of every address (IPv6 and IPv4 where it can)."""
    if socket.has_dualstack_ipv6():
        return socket.create_server(("::", port), family=socket.AF_INET6, dualstack_ipv6=True)
    return socket.create_server(("", port))


def _knock(server: socket.socket, others: int, left: float):
    """(process index, connection) of the next process that knocks and says its index
    (1..others), or None for a connection that does not (closed); TimeoutError after `left`."""
    server.settimeout(left)
    connection = server.accept()[0]
    connection.settimeout(min(left, 10.0))
    said = b""
    try:  # its index line alone: what follows (a "fail" sent at once) is the watch's to read
        while not said.endswith(b"\n") and len(said) < 16:
            byte = connection.recv(1)
            if not byte:
                break
            said += byte
        index = int(said[:-1]) if said.endswith(b"\n") else 0
    except (OSError, ValueError):
        index = 0
    if not 1 <= index <= others:
        connection.close()
        return None
    connection.settimeout(None)
    return index, connection


def gather_workers(cluster: Cluster, timeout: float) -> dict:
    """Process 0: once every other process has reached its port and said its index (each
    knocks once, in `wait_for_coordinator`), frees the port for JAX's service and returns
    {index: connection}, kept open for `worker_watch`; ConfigError after `timeout` or when
    the port cannot be taken."""
    port, others = int(cluster.coordinator.rpartition(":")[2]), cluster.num_processes - 1
    try:
        server = _listen(port)
    except OSError as error:
        raise ConfigError(
            f"The coordinator (process 0) cannot listen on port {port} of {cluster.coordinator}"
            f" ({error.strerror or error}); choose a free port in {cluster.source}."
        ) from None
    deadline, peers = time.monotonic() + timeout, {}
    with server:
        while len(peers) < others:
            left = deadline - time.monotonic()
            if left <= 0:
                for connection in peers.values():
                    connection.close()
                raise ConfigError(
                    f"Only {len(peers)} of the {others} other processes reached the "
                    f"coordinator {cluster.coordinator} (process 0, from {cluster.source}) "
                    f"within {timeout:g} s; start every worker with the same cluster, or raise "
                    "train.collective_timeout."
                )
            try:
                knock = _knock(server, others, left)
            except TimeoutError:
                continue
            if knock:
                peers.setdefault(knock[0], knock[1])
    return peers


def start_cluster(train, environ=None) -> Cluster:
    """Joins this process to the run's cluster (`jax.distributed.initialize`), once."""
    import jax

    cluster = read_cluster(environ)
    if jax.distributed.is_initialized():
        return cluster
    timeout = train.collective_timeout
    if cluster.process_id:
        peers = {0: wait_for_coordinator(cluster, timeout)}
    else:
        peers = gather_workers(cluster, timeout)
    peers = {index: watch_socket(connection, timeout) for index, connection in peers.items()}
    install(Watch(peers, cluster.process_id, cluster.num_processes, timeout).start())
    jax.distributed.initialize(
        cluster.coordinator,
        cluster.num_processes,
        cluster.process_id,
        initialization_timeout=max(1, int(timeout)),
        heartbeat_timeout_seconds=max(1, int(timeout)),
    )
    return cluster


def tpu_devices(devices) -> list:
    """`devices` (JAX's) when they are TPUs; else ConfigError in one sentence."""
    platforms = sorted({getattr(device, "platform", "?") for device in devices})
    if platforms != ["tpu"]:
        raise ConfigError(
            f"train.strategy=tpu on JAX trains on TPU devices, and JAX sees "
            f"{len(devices)} {'/'.join(platforms) or 'no'} device(s) here; run it on a TPU "
            "host with jax[tpu] installed, or choose train.strategy=mirrored."
        )
    return list(devices)
