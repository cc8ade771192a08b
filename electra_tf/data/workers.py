"""Chunks of a corpus through `ChunkWork`, in this process or in N worker processes.

`run_chunks` is the one loop `prepare` uses: with one worker it runs `ChunkWork` here;
with more it spawns worker processes (`chunk_work.worker_main`), hands each one chunk
at a time and answers their digests with verdicts. A `Ledger` gives the verdicts in
chunk order whatever order the digests come in: a document repeating one of an
earlier chunk (or earlier in its own) is dropped, and reading stops at
`max_documents`; so the result is the same for every number of workers.

A worker that fails, or dies (killed, out of memory), ends the run with a
`ChunkFailed` naming the input it was working on; the other workers are stopped.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import time
from multiprocessing.connection import wait

from electra_tf.data.chunk_work import ChunkWork, Verdict, describe_error, worker_main

__all__ = ["Ledger", "ChunkFailed", "RunTiming", "run_chunks", "peak_memory"]


class ChunkFailed(RuntimeError):
    """A chunk that could not be turned into examples: `where` it was, and why.

    `kind` is "io" (a write failed), "died" (the worker process ended: `reason` says
    how) or "error" (anything else).
    """

    def __init__(self, where: str, reason: str, kind: str = "error"):
        super().__init__(f"{where}: {reason}")
        self.where, self.reason, self.kind = where, reason, kind

    @property
    def is_io(self) -> bool:
        """Whether a write failed (a full disk, a read-only folder)."""
        return self.kind == "io"


class Ledger:
    """Verdicts for chunks' digests, given strictly in chunk order (see the module docstring).

    Example:

    >>> ledger = Ledger(deduplicate=True, max_documents=4)
    >>> ledger.offer(1, [b"c", b"a"])  # chunk 1 waits for chunk 0
    []
    >>> [(i, v.counted, sorted(v.dropped)) for i, v in ledger.offer(0, [b"a", b"b", b"a"])]
    [(0, 3, [2]), (1, 1, [])]
    >>> ledger.last_index
    1
    """

    def __init__(self, deduplicate: bool, max_documents: int | None):
        self.deduplicate, self.max_documents = deduplicate, max_documents
        self.seen: set = set()
        self.waiting: dict[int, list] = {}
        self.next_index = self.counted = 0
        self.last_index: int | None = None  # the chunk where max_documents was reached

    def offer(self, index: int, digests: list) -> list[tuple[int, Verdict]]:
        """Takes chunk `index`'s digests; returns the verdicts now decided, in order."""
        self.waiting[index] = digests
        decided = []
        while self.next_index in self.waiting:
            digests = self.waiting.pop(self.next_index)
            decided.append((self.next_index, self._verdict(self.next_index, digests)))
            self.next_index += 1
        return decided

    def _verdict(self, index: int, digests: list) -> Verdict:
        counted = len(digests)
        if self.max_documents is not None:
            counted = max(0, min(counted, self.max_documents - self.counted))
            if self.last_index is None and self.counted + len(digests) >= self.max_documents:
                self.last_index = index
        self.counted += counted
        if not self.deduplicate:
            return Verdict(counted)
        dropped = set()
        for number, digest in enumerate(digests[:counted]):
            if digest in self.seen:
                dropped.add(number)
            self.seen.add(digest)
        return Verdict(counted, frozenset(dropped))

    @property
    def exhausted(self) -> bool:
        """Whether `max_documents` has been reached (read no further chunks)."""
        return self.last_index is not None


@dataclasses.dataclass
class RunTiming:
    """Seconds to start the workers and of work once all had started; the workers' wall
    and CPU seconds on chunks, summed (busy below `work` x workers: they waited; CPU
    below busy: other processes had the cores)."""

    startup: float = 0.0
    work: float = 0.0
    busy: float = 0.0
    cpu: float = 0.0


class _Progress:
    """Follows finished chunks: a progress bar over the input's on-disk bytes with tokens/s
    (tqdm adds MB/s and the ETA), the workers' summed time, and the caller's hook."""

    def __init__(self, enabled: bool, total_bytes: int | None):
        self.enabled, self.total, self.bar, self.tokens = enabled, total_bytes, None, 0
        self.on_result, self.timing = None, RunTiming()

    def start(self) -> None:
        if self.enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, unit="B", unit_scale=True, desc="prepare")
            self.started = time.perf_counter()

    def done(self, chunk, result) -> None:
        self.timing.busy += result.seconds
        self.timing.cpu += result.cpu_seconds
        if self.on_result is not None:
            self.on_result(result)
        if self.bar is not None:
            self.tokens += result.tokenized
            rate = self.tokens / max(time.perf_counter() - self.started, 1e-9)
            self.bar.set_postfix_str(f"{rate / 1e3:,.0f}k tokens/s", refresh=False)
            self.bar.update(chunk.stats.input_bytes)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_chunks(chunks, settings, workers: int, ledger: Ledger, progress=None, on_result=None):
    """Every chunk's `ChunkResult`, by chunk index, and the `RunTiming`.

    Args:
        chunks: an iterator of `Chunk`s (read lazily, one ahead of the workers).
        settings: `ChunkSettings`.
        workers: processes; 1 runs `ChunkWork` in this process.
        ledger: decides which documents are packed.
        progress: `(enabled, total input bytes)` for a progress bar, or None.
        on_result: called with each `ChunkResult` as it comes (in any chunk order).

    Raises:
        ChunkFailed: a worker failed or died; the message names the chunk's input.
    """
    bar = _Progress(*(progress or (False, None)))
    bar.on_result = on_result
    try:
        run = _run_here if workers <= 1 else _run_in_processes
        return run(iter(chunks), settings, workers, ledger, bar)
    finally:
        bar.close()


def _run_here(chunks, settings, workers, ledger, bar):
    started = time.perf_counter()
    work = ChunkWork(settings)
    timing, results = bar.timing, {}
    timing.startup = time.perf_counter() - started
    bar.start()
    for chunk in chunks:
        try:
            ((_, verdict),) = ledger.offer(chunk.index, work.read(chunk))
            work.tokenize()
            results[chunk.index] = work.finish(verdict)
        except Exception as error:
            is_io, reason = describe_error(error)
            raise ChunkFailed(chunk.where(), reason, "io" if is_io else "error") from error
        bar.done(chunk, results[chunk.index])
        if ledger.exhausted:
            break
    timing.work = time.perf_counter() - started - timing.startup
    return results, timing


@dataclasses.dataclass
class _Worker:
    process: multiprocessing.Process
    connection: object
    chunk: object = None  # the chunk it is working on
    ready: bool = False

    def died(self) -> ChunkFailed:
        """The failure of a worker process that ended, naming its chunk."""
        self.process.join(1)
        code = self.process.exitcode
        how = f"was killed (signal {-code})" if code and code < 0 else f"exited ({code})"
        where = self.chunk.where() if self.chunk is not None else "no chunk (it was starting)"
        return ChunkFailed(where, f"A prepare worker (pid {self.process.pid}) {how}", "died")


def _send(worker: _Worker, message) -> None:
    try:
        worker.connection.send(message)
    except OSError:  # a broken pipe: the worker is gone
        raise worker.died() from None


def _start(settings, workers: int) -> list[_Worker]:
    context = multiprocessing.get_context("spawn")  # not fork: TensorFlow holds threads
    pool = []
    for _ in range(workers):
        here, there = context.Pipe()
        process = context.Process(
            target=worker_main, args=(there, settings, os.getpid()), daemon=True
        )
        process.start()
        there.close()
        pool.append(_Worker(process, here))
    return pool


def _stop(pool: list[_Worker]) -> None:
    for worker in pool:
        try:
            worker.connection.send(("stop", None, None))
        except OSError:
            pass
    deadline = time.monotonic() + 10
    for worker in pool:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.connection.close()


def _events(pool: list[_Worker]):
    """`(worker, message)` as messages come; a failed or dead worker raises `ChunkFailed`."""
    ready = wait([w.connection for w in pool] + [w.process.sentinel for w in pool])
    for worker in pool:
        if worker.connection in ready:
            try:
                message = worker.connection.recv()
            except (EOFError, OSError):
                raise worker.died() from None
            if message[0] == "error":
                is_io, reason = message[2]
                kind = "io" if is_io else "error"
                where = worker.chunk.where() if worker.chunk is not None else "its start"
                raise ChunkFailed(where, reason, kind)
            yield worker, message
        elif worker.process.sentinel in ready:
            raise worker.died()


def _run_in_processes(chunks, settings, workers, ledger, bar):
    started = time.perf_counter()
    pool = _start(settings, workers)
    try:
        while not all(worker.ready for worker in pool):
            for worker, _ in _events(pool):
                worker.ready = True  # the only message before a chunk is "ready"
        timing = bar.timing
        timing.startup = time.perf_counter() - started
        bar.start()
        results = _dispatch(pool, chunks, ledger, bar)
        timing.work = time.perf_counter() - started - timing.startup
        return results, timing
    finally:
        _stop(pool)


def _dispatch(pool: list[_Worker], chunks, ledger: Ledger, bar) -> dict:
    results, owners = {}, {}
    ahead = next(chunks, None)  # read while the workers work
    while True:
        for worker in pool:
            if worker.chunk is None and ahead is not None and not ledger.exhausted:
                worker.chunk, owners[ahead.index] = ahead, worker
                _send(worker, ("chunk", ahead.index, ahead))
                ahead = next(chunks, None)
        if all(worker.chunk is None for worker in pool):
            return results
        for worker, (kind, index, payload) in _events(pool):
            if kind == "digests":
                for decided, verdict in ledger.offer(index, payload):
                    _send(owners.pop(decided), ("verdict", decided, verdict))
            elif kind == "done":
                results[index] = payload
                bar.done(worker.chunk, payload)
                worker.chunk = None


def peak_memory() -> dict:
    """Peak resident memory (MB) of this process and of its largest finished child."""
    import resource
    import sys

    mb = 1024 if sys.platform != "darwin" else 1024 * 1024  # ru_maxrss: KB (macOS: bytes)
    return {
        "main": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / mb),
        "largest_worker": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / mb),
    }
