"""Two MultiWorkerMirroredStrategy processes on 127.0.0.1 train and agree on every weight."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import CHILD_PYTHON, TESTS, free_ports, write_packed

HERE = str(TESTS)


@pytest.mark.slow
def test_two_workers_train_to_identical_weights(tmp_path):
    data = write_packed(tmp_path / "data", n=64, seq=16, shards=2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
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
                    [*CHILD_PYTHON, os.path.join(HERE, "multi_worker_job.py"), data, run, out],
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


SMALL = [
    "--set", "model.num_layers=1", "--set", "model.hidden_dim=16", "--set",
    "model.embedding_dim=8", "--set", "model.num_heads=2", "--set", "model.intermediate_dim=32",
    "--set", "model.generator_size_fraction=0.5", "--set", "train.warmup_steps=0",
    "--set", "train.checkpoint_every=2", "--set", "train.log_every=2",
    "--set", "train.collective_timeout=30",
]  # fmt: skip


def _launch(data, run, cluster, index, steps, out=None):
    """One worker's `electra-tf pretrain`; with `out`, through `multi_worker_cli_job.py`,
    which runs the same command and saves the worker's weights to `out`."""
    env = dict(
        os.environ,
        TF_CPP_MIN_LOG_LEVEL="3",
        TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}),
    )
    program = ["-m", "electra_tf.cli", "pretrain"]
    if out is not None:
        program = [os.path.join(HERE, "multi_worker_cli_job.py"), str(out)]
    command = [
        sys.executable, *program, "--recipe", "tiny", "--data", data, "--output-dir", run,
        "--strategy", "multi_worker", "--steps", str(steps), "--batch-size", "8",
        "--verbose", "0", *SMALL,
    ]  # fmt: skip
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _weights(run, step):
    import tensorflow as tf

    reader = tf.train.load_checkpoint(os.path.join(run, "checkpoints", f"step-{step:08d}", "ckpt"))
    names = [n for n in reader.get_variable_to_shape_map() if "OBJECT_GRAPH" not in n]
    return {n: reader.get_tensor(n) for n in names}


@pytest.mark.slow
def test_a_lost_worker_stops_the_survivor_and_a_relaunch_resumes_exactly(tmp_path):
    import time

    data = write_packed(tmp_path / "data", n=64, seq=16, shards=2)
    steps = 10

    def run_both(run, kill_after=None):
        cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
        workers = [_launch(data, run, cluster, i, steps) for i in range(2)]
        if kill_after is None:
            return [w.communicate(timeout=600) + (w.returncode,) for w in workers]
        marker = os.path.join(run, "checkpoints", f"step-{kill_after:08d}")
        deadline = time.time() + 300
        while not os.path.exists(marker) and time.time() < deadline:
            time.sleep(0.05)
        workers[1].kill()  # SIGKILL: no goodbye to the chief
        killed = time.time()
        out, err = workers[0].communicate(timeout=180)  # the survivor must not hang
        workers[1].communicate()
        return workers[0].returncode, err, time.time() - killed

    straight = str(tmp_path / "straight")
    assert all(code == 0 for *_, code in run_both(straight)), "the uninterrupted run failed"
    interrupted = str(tmp_path / "interrupted")
    code, err, seconds = run_both(interrupted, kill_after=4)
    assert code == 2 and seconds < 120, (code, seconds, err[-2000:])
    assert "A worker of this multi-worker run was lost at step" in err and "Traceback" not in err
    assert "relaunch every worker" in err
    assert f"step-{steps:08d}" not in os.listdir(os.path.join(interrupted, "checkpoints"))
    results = run_both(interrupted)  # relaunched: resumes from the last checkpoint
    assert all(code == 0 for *_, code in results), results[0][1][-2000:]
    a, b = _weights(straight, steps), _weights(interrupted, steps)
    assert a.keys() == b.keys() and len(a) > 40
    assert all(np.array_equal(a[k], b[k]) for k in a)


# The default suite's form: one uninterrupted pair of `electra-tf pretrain` workers (each
# saving its weights, `multi_worker_cli_job.py`) serves both properties, as the reference of
# the killed-and-relaunched pair and as the two workers that must agree; 4 processes, was 6.
QUICK_STEPS, QUICK_KILL_AFTER = 6, 2


def _pair(data, run, outs):
    """Two workers of one run on fresh ports: their Popen objects."""
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
    return [_launch(data, run, cluster, i, QUICK_STEPS, out) for i, out in enumerate(outs)]


@pytest.fixture(scope="module")
def straight_pair(tmp_path_factory):
    """An uninterrupted two-worker run of QUICK_STEPS: (data, run folder, both workers'
    weights as loaded .npz files)."""
    folder = tmp_path_factory.mktemp("multi_worker")
    data = write_packed(folder / "data", n=64, seq=16, shards=2)
    run, outs = str(folder / "straight"), [folder / f"weights-{i}.npz" for i in range(2)]
    for worker in _pair(data, run, outs):
        _, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-3000:]
    return data, run, [np.load(out) for out in outs]


def test_two_workers_of_one_pretrain_run_end_on_identical_weights(straight_pair):
    """Default twin of `test_two_workers_train_to_identical_weights` (slow: its own pair of
    `run_pretraining` workers): the uninterrupted pair of `electra-tf pretrain` workers."""
    _, run, (first, second) = straight_pair
    assert int(first["step"]) == int(second["step"]) == QUICK_STEPS
    names = [k for k in first.files if k != "step"]
    assert len(names) > 40 and sorted(names) == sorted(k for k in second.files if k != "step")
    assert all(np.array_equal(first[k], second[k]) for k in names)
    # Only the chief wrote checkpoints, into the run folder (train.keep_checkpoints=3).
    assert sorted(os.listdir(os.path.join(run, "checkpoints"))) == [
        "step-00000002",
        "step-00000004",
        "step-00000006",
    ]


def test_a_lost_worker_stops_the_survivor_and_a_relaunch_resumes_exactly_quick(
    straight_pair, tmp_path
):
    """Default twin of `test_a_lost_worker_stops_the_survivor_and_a_relaunch_resumes_exactly`
    (slow: its own uninterrupted pair, 10 steps, killed after checkpoint 4): killed after
    checkpoint 2 of 6, compared with the shared uninterrupted pair."""
    import time

    data, straight, _ = straight_pair
    interrupted = str(tmp_path / "interrupted")
    outs = [tmp_path / f"weights-{i}.npz" for i in range(2)]
    workers = _pair(data, interrupted, outs)
    marker = os.path.join(interrupted, "checkpoints", f"step-{QUICK_KILL_AFTER:08d}")
    deadline = time.time() + 300
    while not os.path.exists(marker) and time.time() < deadline:
        time.sleep(0.05)
    workers[1].kill()  # SIGKILL: no goodbye to the chief
    killed = time.time()
    _, err = workers[0].communicate(timeout=180)  # the survivor must not hang
    seconds = time.time() - killed
    workers[1].communicate()
    code = workers[0].returncode
    assert code == 2 and seconds < 120, (code, seconds, err[-2000:])
    assert "A worker of this multi-worker run was lost at step" in err and "Traceback" not in err
    assert "relaunch every worker" in err
    assert f"step-{QUICK_STEPS:08d}" not in os.listdir(os.path.join(interrupted, "checkpoints"))
    for worker in _pair(data, interrupted, outs):  # relaunched: resumes from the last checkpoint
        _, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-2000:]
    a, b = _weights(straight, QUICK_STEPS), _weights(interrupted, QUICK_STEPS)
    assert a.keys() == b.keys() and len(a) > 40
    assert all(np.array_equal(a[k], b[k]) for k in a)
