"""`prepare`'s spawned workers start and end as an `electra-tf` process does (`cli.command`):
the frameworks' optional probes left out of their imports (`electra_tf.startup`), their
objects frozen before the interpreter's exit, whichever way the worker stops
(docs/results/data/worker-exit-2026-12-02/: prepare --workers 2 at 0.95x its wall)."""

import importlib.util
import json
import multiprocessing
import os
import pathlib

from electra_tf.data.chunk_work import ChunkSettings, worker_main
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary


def _worker_reporting_its_freeze(connection, settings, parent, report):
    """`worker_main` in a spawned process whose last exit handler writes the number of
    frozen objects and the loaded top-level modules to `report`."""
    import atexit
    import gc
    import sys

    def write():
        loaded = sorted({name.partition(".")[0] for name in sys.modules})
        state = {"frozen": gc.get_freeze_count(), "modules": loaded}
        pathlib.Path(report).write_text(json.dumps(state))

    atexit.register(write)
    worker_main(connection, settings, parent)


def test_a_worker_imports_no_optional_probe_and_ends_with_its_objects_frozen(tmp_path):
    vocab = write_vocabulary([*SPECIAL_TOKENS, "a", "b"], tmp_path / "vocab.txt")
    settings = ChunkSettings(str(tmp_path / "out"), str(vocab), True, True, 32, 1, 3, True)
    context = multiprocessing.get_context("spawn")  # as workers._start makes them
    here, there = context.Pipe()
    report = tmp_path / "frozen.txt"
    process = context.Process(
        target=_worker_reporting_its_freeze,
        args=(there, settings, os.getpid(), str(report)),
        daemon=True,
    )
    process.start()
    there.close()
    try:
        assert here.poll(300) and here.recv()[0] == "ready"
        here.send(("stop", None, None))
        process.join(120)
    finally:
        if process.is_alive():
            process.kill()
    assert process.exitcode == 0
    state = json.loads(report.read_text())
    assert state["frozen"] > 10_000  # every object the worker left, not a handful
    assert "tensorflow" in state["modules"] and "keras" in state["modules"]
    probes = {"sklearn", "pandas", "matplotlib", "scipy", "jax", "cv2"}
    installed = {name for name in probes if importlib.util.find_spec(name) is not None}
    assert installed >= {"sklearn", "matplotlib"}  # the package's own requirements
    assert installed.isdisjoint(state["modules"])
