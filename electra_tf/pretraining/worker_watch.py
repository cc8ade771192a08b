"""A multi-worker run's watch over its processes: a lost one stops the others in one sentence.

On TensorFlow a lost worker makes the survivors' collectives fail, and `run._fit` turns
that into `WorkerLost`. On JAX (0.10.2, gloo CPU collectives) a worker killed mid-run
leaves the others blocked in a collective for good: no Python error, and SIGTERM is
caught (JAX's preemption handler), so nothing but SIGKILL ends them. So each process keeps
open the connection it made to process 0 while gathering (`jax_cluster`), each side
watched by a daemon thread (`Watch`): when the other end closes without a word (its
process died: the kernel closes its sockets) or stops answering TCP keepalive within
train.collective_timeout (its host is gone), the thread prints the `WorkerLost` sentence
(`lost_sentence`) as the CLI would and ends the process with exit status 2 (`os._exit`:
the main thread is stuck in C++ and cannot raise). Process 0 first tells the others which
process was lost and its last checkpoint. A process whose training ends says "done"
(finished) or "fail" (raised, or the process left without training); after "fail" the
others get train.collective_timeout to end on their own before they are stopped, in one
sentence too. Checkpoints are written
atomically (`checkpoint`), so a process stopped mid-write leaves no partial one.

Nothing here imports TensorFlow or JAX.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import socket
import sys
import threading
import time

__all__ = ["Watch", "current", "install", "lost_sentence", "training", "watch_socket"]

_WATCH: Watch | None = None


def lost_sentence(step, reason: str, checkpoint: str | None) -> str:
    """The one sentence of a lost worker (`WorkerLost`'s, on every backend)."""
    resume_from = f"its last checkpoint ({checkpoint})" if checkpoint else "its last checkpoint"
    at = f"at step {step}" if step is not None else "before its first step"
    return (
        f"A worker of this multi-worker run was lost {at} ({reason}); relaunch every worker "
        f"with the same command: the run resumes from {resume_from}."
    )


def watch_socket(connection: socket.socket, timeout: float) -> socket.socket:
    """`connection` with TCP keepalive that notices a silent peer within about `timeout`."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    probe = max(1, int(timeout / 6))
    for name, value in (("TCP_KEEPIDLE", 2 * probe), ("TCP_KEEPINTVL", probe), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, name):  # Linux; elsewhere the system's keepalive times
            connection.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
    return connection


class Watch:
    """Watches `peers` (process index -> connection) of process `process_id` from a daemon
    thread; `stop(sentence)` (default: print it and `os._exit(2)`) when one is lost."""

    def __init__(self, peers: dict, process_id: int, count: int, timeout: float, stop=None):
        self.peers, self.process_id, self.count = dict(peers), process_id, count
        self.timeout, self.stop = timeout, stop or _print_and_exit
        self.step = None  # the last step this process finished (`StepWatch`)
        self.checkpoint = lambda: None  # the name of the run's last checkpoint, or None
        self.ended = threading.Event()
        self._lock = threading.Lock()  # one sentence, even if two peers go at once
        self._failed_at = None  # (process, monotonic time) of a peer that raised
        self._thread = threading.Thread(target=self._run, name="worker-watch", daemon=True)

    def start(self) -> Watch:
        """Starts watching; returns self."""
        self._thread.start()
        return self

    def end(self, finished: bool) -> None:
        """This process's training ended (`finished`, or raised): tells the peers, and
        stops watching."""
        with self._lock:
            if self.ended.is_set():
                return
            self.ended.set()
        self._tell(b"done\n" if finished else b"fail\n")

    def _tell(self, message: bytes, skip=None) -> None:
        for index, connection in list(self.peers.items()):  # the thread may drop one
            if index != skip:
                try:
                    connection.sendall(message)
                except OSError:
                    pass

    def _run(self) -> None:
        buffers = {index: b"" for index in self.peers}
        while not self.ended.is_set() and (self.peers or self._failed_at):
            ready = _readable(list(self.peers.values()), 0.5)
            for index, connection in list(self.peers.items()):
                if connection not in ready:
                    continue
                try:
                    data = connection.recv(256)
                except OSError as error:  # reset, or keepalive found nobody
                    return self._lost(index, error.strerror or str(error))
                if not data:
                    return self._lost(index, "its connection closed")
                buffers[index] += data
                *lines, buffers[index] = buffers[index].split(b"\n")
                for line in lines:
                    self._heard(index, line.decode(errors="replace").split())
            if self._failed_at and time.monotonic() - self._failed_at[1] > self.timeout:
                return self._stopped(self._failed_at[0])

    def _heard(self, index: int, words: list) -> None:
        """A message from process `index`: done, fail, or (from process 0) lost K CHECKPOINT."""
        if words[:1] == ["done"]:
            self.peers.pop(index).close()
        elif words[:1] == ["fail"]:
            self.peers.pop(index).close()
            self._failed_at = (index, time.monotonic())
        elif words[:1] == ["lost"] and len(words) == 3:
            checkpoint = None if words[2] == "-" else words[2]
            self._say(f"process {words[1]} of {self.count} stopped answering", checkpoint)

    def _lost(self, index: int, how: str) -> None:
        if self.ended.is_set():
            return
        try:
            checkpoint = self.checkpoint()
        except Exception:  # noqa: BLE001 - the sentence matters more than the name
            checkpoint = None
        if self.process_id == 0:  # the others hear it from here
            self._tell(f"lost {index} {checkpoint or '-'}\n".encode(), skip=index)
        self._say(f"process {index} of {self.count} stopped answering: {how}", checkpoint)

    def _stopped(self, index: int) -> None:
        step = self.step if self.step is not None else "its start"
        self._finish(
            f"Process {index} of this multi-worker run stopped with an error near step {step} "
            f"(its own output says why) and this process was still waiting for it after "
            f"{self.timeout:g} s; fix that, then relaunch every worker with the same command: "
            f"the run resumes from its last checkpoint."
        )

    def _say(self, reason: str, checkpoint: str | None) -> None:
        self._finish(lost_sentence(self.step, reason, checkpoint))

    def _finish(self, sentence: str) -> None:
        with self._lock:
            if self.ended.is_set():
                return
            self.ended.set()
        self.stop(sentence)


def _readable(connections: list, wait: float) -> list:
    try:
        return select.select(connections, [], [], wait)[0]
    except (OSError, ValueError):  # one was closed under us: look at each
        return connections


def _print_and_exit(sentence: str) -> None:
    """The CLI's way with a user error (`electra-tf pretrain: ...`, exit status 2), from a
    thread: the main thread is blocked in a collective and cannot raise."""
    print(f"electra-tf pretrain: {sentence}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(2)


@contextlib.contextmanager
def training(watch: Watch | None, grace: float = 3.0):
    """Training under `watch` (None: nothing to do): tells the peers how it ended. An error
    from training first waits up to `grace` s for the watch to find a lost peer (a killed
    peer breaks this process's collectives and its connection at once: the watch's
    sentence, not the collective's traceback, is the one to show)."""
    if watch is None:
        yield
        return
    try:
        yield
    except BaseException:
        watch.ended.wait(min(grace, watch.timeout))
        watch.end(finished=False)
        raise
    watch.end(finished=True)


def current() -> Watch | None:
    """This process's watch (started by `jax_cluster.start_cluster`), or None."""
    return _WATCH


def install(watch: Watch | None) -> Watch | None:
    """Makes `watch` this process's watch (None: none); returns it. A process that leaves
    before its training ended (an error, or nothing left to train) says "fail" on its way
    out, before JAX's own shutdown (Python runs exit handlers last registered first)."""
    global _WATCH
    _WATCH = watch
    if watch is not None:
        atexit.register(watch.end, False)
    return watch
