"""Two MultiWorkerMirroredStrategy processes on 127.0.0.1 train and agree on every weight."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
from helpers import write_packed

HERE = os.path.dirname(__file__)


def _free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_two_workers_train_to_identical_weights(tmp_path):
    data = write_packed(tmp_path / "data", n=64, seq=16, shards=2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in _free_ports(2)]}
    run = str(tmp_path / "run")
    workers = []
    for index in range(2):
        env = dict(
            os.environ,
            TF_CPP_MIN_LOG_LEVEL="3",
            TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}),
        )
        out = str(tmp_path / f"weights-{index}.npz")
        workers.append(
            (
                subprocess.Popen(
                    [sys.executable, os.path.join(HERE, "multi_worker_job.py"), data, run, out],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                ),
                out,
            )
        )
    for process, _ in workers:
        output, _ = process.communicate(timeout=600)
        assert process.returncode == 0, output[-3000:]
    first, second = (np.load(out) for _, out in workers)
    assert int(first["step"]) == int(second["step"]) == 4
    names = [k for k in first.files if k != "step"]
    assert len(names) > 40
    assert all(np.array_equal(first[k], second[k]) for k in names)
    # Only the chief wrote checkpoints, into the run folder.
    assert sorted(os.listdir(os.path.join(run, "checkpoints"))) == [
        "step-00000002",
        "step-00000004",
    ]
