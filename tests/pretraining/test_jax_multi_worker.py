"""`electra-tf pretrain --backend jax --strategy multi_worker` (and `tpu`) on JAX.

The cluster comes from TF_CONFIG, as on TensorFlow, or Keras's KERAS_DISTRIBUTION_*
variables (`electra_tf/pretraining/jax_cluster.py`). The default tests read clusters,
refuse bad ones, choose the devices of `tpu` from fake device objects, and start one JAX
process: a worker whose coordinator is not there, which must say so and exit 2 within
its timeout (no training, so no compilation). The slow test is the full form: two JAX
worker processes on 127.0.0.1 (one CPU device each) train 4 steps and must end with the
same weights as each other and as one process over two CPU devices, and a run resumed
from the chief's step-2 checkpoint must reach the same step-4 weights. The other slow
test kills a worker mid-run (SIGKILL), then process 0: the survivor must say so in one
sentence and exit 2 within seconds, and the relaunched run must resume and finish (the
watch itself, without JAX, is test_worker_watch.py).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import (
    CHILD_PYTHON,
    TESTS,
    backend_child_env,
    free_ports,
    packed_with_vocabulary,
    set_flags,
)

from electra_tf.config import ConfigError, load_recipe
from electra_tf.pretraining import jax_cluster, portable_run

SMALL = {
    "model.num_layers": 1,
    "model.hidden_dim": 8,
    "model.embedding_dim": 8,
    "model.num_heads": 2,
    "model.intermediate_dim": 16,
    "model.max_sequence_length": 16,
    "data.sequence_length": 16,
    "train.warmup_steps": 0,
    "train.checkpoint_every": 2,
    "train.log_every": 2,
    "train.collective_timeout": 120,
}
KERAS_VARIABLES = (
    "KERAS_DISTRIBUTION_JOB_ADDRESSES",
    "KERAS_DISTRIBUTION_NUM_PROCESSES",
    "KERAS_DISTRIBUTION_PROCESS_ID",
)


def _tf_config(cluster, kind="worker", index=0):
    return json.dumps({"cluster": cluster, "task": {"type": kind, "index": index}})


TWO = {"worker": ["10.0.0.1:1234", "10.0.0.2:1234"]}


@pytest.mark.parametrize(
    "environ, addresses, process_id, source",
    [
        ({"TF_CONFIG": _tf_config(TWO, index=1)}, TWO["worker"], 1, "TF_CONFIG"),
        (
            {"TF_CONFIG": _tf_config({"chief": ["c:1"], "worker": ["w:2", "w:3"]}, index=1)},
            ["c:1", "w:2", "w:3"],
            2,
            "TF_CONFIG",
        ),
        (
            {"TF_CONFIG": _tf_config({"chief": ["c:1"], "worker": ["w:2"]}, "chief")},
            ["c:1", "w:2"],
            0,
            "TF_CONFIG",
        ),
        (
            dict(zip(KERAS_VARIABLES, ["a:1,b:2,c:3", "3", "2"]), TF_CONFIG="not read"),
            ["a:1", "b:2", "c:3"],
            2,
            "KERAS_DISTRIBUTION_*",
        ),
        (dict(zip(KERAS_VARIABLES, ["a:1", "2", "1"])), ["a:1", ""], 1, "KERAS_DISTRIBUTION_*"),
    ],
)  # fmt: skip
def test_the_cluster_is_read_from_tf_config_or_keras_variables(
    environ, addresses, process_id, source
):
    cluster = jax_cluster.read_cluster(environ)
    assert cluster == jax_cluster.Cluster(tuple(addresses), process_id, source)
    assert cluster.coordinator == addresses[0] and cluster.num_processes == len(addresses)


@pytest.mark.parametrize(
    "environ, message",
    [
        ({}, "train.strategy=multi_worker needs the cluster: the TF_CONFIG environment"),
        ({"TF_CONFIG": "{cluster"}, "TF_CONFIG is not JSON"),
        ({"TF_CONFIG": _tf_config(TWO, index=2)}, "TF_CONFIG has task worker/2, which is not in"),
        ({"TF_CONFIG": _tf_config(TWO, "ps")}, "TF_CONFIG has task ps/0"),
        ({"TF_CONFIG": _tf_config({**TWO, "ps": ["p:1"]})}, "needs cluster.worker"),
        ({"TF_CONFIG": _tf_config({"worker": ["10.0.0.1"]})}, "names '10.0.0.1', which is not"),
        (dict(zip(KERAS_VARIABLES, ["a:1,b:2", "3", "0"])), "list 2 addresses for 3 processes"),
        (dict(zip(KERAS_VARIABLES, ["a:1,b:2", "2", "2"])), "give process 2 of 2"),
        (dict(zip(KERAS_VARIABLES, ["a:1,b:2", "2", "x"])), "whole numbers in KERAS_DIST"),
    ],
)
def test_a_bad_cluster_is_one_sentence(environ, message):
    with pytest.raises(ConfigError, match=message) as raised:
        jax_cluster.read_cluster(environ)
    assert str(raised.value).count(". ") == 0 and "\n" not in str(raised.value)


def test_a_worker_waits_for_the_coordinator_and_gives_up_after_its_timeout():
    (port,) = free_ports(1)
    cluster = jax_cluster.Cluster((f"127.0.0.1:{port}", "127.0.0.1:1"), 1, "TF_CONFIG")
    started = time.monotonic()
    with pytest.raises(
        ConfigError, match=f"Process 1 could not reach the coordinator 127.0.0.1:{port}"
    ):
        jax_cluster.wait_for_coordinator(cluster, 0.5)
    assert 0.5 <= time.monotonic() - started < 10
    with socket.create_server(("127.0.0.1", port)):  # now it listens: no wait
        jax_cluster.wait_for_coordinator(cluster, 0.5)


def test_the_coordinator_waits_for_every_worker_to_knock_and_gives_up_after_its_timeout():
    import threading

    (port,) = free_ports(1)
    addresses = (f"127.0.0.1:{port}", "127.0.0.1:1", "127.0.0.1:2")
    chief = jax_cluster.Cluster(addresses, 0, "TF_CONFIG")
    workers = [jax_cluster.Cluster(addresses, i, "TF_CONFIG") for i in (1, 2)]
    knocks = [
        threading.Thread(target=jax_cluster.wait_for_coordinator, args=(worker, 30))
        for worker in workers
    ]
    for knock in knocks:  # the workers start first and knock until the coordinator listens
        knock.start()
    jax_cluster.gather_workers(chief, 30)
    for knock in knocks:
        knock.join(timeout=30)
        assert not knock.is_alive()
    started = time.monotonic()  # nobody knocks this time
    with pytest.raises(ConfigError, match="Only 0 of the 2 other processes reached the coord"):
        jax_cluster.gather_workers(chief, 0.5)
    assert 0.5 <= time.monotonic() - started < 10
    with socket.create_server(("127.0.0.1", port)):  # another program holds the port
        with pytest.raises(ConfigError, match=f"cannot listen on port {port} of 127.0.0.1:"):
            jax_cluster.gather_workers(chief, 0.5)


def _fake_devices(platform, count=4):
    return [SimpleNamespace(platform=platform, id=i) for i in range(count)]


def test_tpu_on_jax_splits_over_tpu_devices_and_refuses_others(monkeypatch):
    import jax

    tpus = _fake_devices("tpu")
    assert jax_cluster.tpu_devices(tpus) == tpus
    with pytest.raises(ConfigError, match="JAX sees 2 cpu device"):
        jax_cluster.tpu_devices(_fake_devices("cpu", 2))
    tpu = load_recipe("tiny").override("train.strategy=tpu").train
    monkeypatch.setattr(jax, "devices", lambda: tpus)
    assert portable_run._devices(tpu) == tpus  # noqa: SLF001 - the choice, without Keras
    monkeypatch.setattr(jax, "devices", lambda: _fake_devices("gpu", 1))
    with pytest.raises(ConfigError, match="train.strategy=tpu on JAX trains on TPU devices"):
        portable_run.set_distribution(tpu)
    worker = load_recipe("tiny").override("train.strategy=multi_worker").train
    assert portable_run._devices(worker) == jax.devices()  # noqa: SLF001 - every process's


def test_multi_worker_on_jax_needs_a_cluster_and_stays_refused_on_torch(monkeypatch):
    for name in ("TF_CONFIG", *KERAS_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    config = load_recipe("tiny").override("train.strategy=multi_worker")
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "jax")
    with pytest.raises(ConfigError, match="multi_worker needs the cluster: the TF_CONFIG"):
        portable_run.check_backend(config)
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "torch")
    with pytest.raises(ConfigError, match="runs on the TensorFlow and JAX backends only"):
        portable_run.check_backend(config)


def _command(data, run, steps, *more):
    args = ["--recipe", "tiny", "--data", data, "--output-dir", str(run), "--steps", str(steps)]
    return [*args, "--batch-size", "4", "--verbose", "0", *set_flags(SMALL), *more]


def test_a_worker_whose_coordinator_is_absent_exits_2_in_one_sentence(tmp_path):
    data = packed_with_vocabulary(tmp_path / "data", n=16)
    (port,) = free_ports(1)
    cluster = {"worker": [f"127.0.0.1:{port}", "127.0.0.1:1"]}
    env = dict(backend_child_env("jax"), TF_CONFIG=_tf_config(cluster, index=1))
    run = tmp_path / "run"
    command = [sys.executable, "-m", "electra_tf.cli", "pretrain", *_command(data, run, 2)]
    command += ["--strategy", "multi_worker", "--set", "train.collective_timeout=2"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in result.stderr.splitlines() if line.startswith("electra-tf")]
    assert result.returncode == 2, result.stderr[-3000:]
    assert lines == [
        f"electra-tf pretrain: Process 1 could not reach the coordinator 127.0.0.1:{port} "
        "(process 0, from TF_CONFIG) within 2 s (Connection refused); start process 0 too, "
        "check the address, or raise train.collective_timeout."
    ]
    assert "Traceback" not in result.stderr and not run.exists()


def _trainable(folder):
    with np.load(folder / "variables.npz") as saved:
        return [saved[k] for k in sorted(saved.files) if k.startswith("trainable.")]


@pytest.mark.slow
def test_two_jax_workers_train_as_one_process_over_two_devices(tmp_path):
    data = packed_with_vocabulary(tmp_path / "data", n=64)
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    run, steps = tmp_path / "run", 4
    job = str(TESTS / "multi_worker_cli_job.py")
    workers = []
    for index in range(2):
        env = dict(backend_child_env("jax"), TF_CONFIG=_tf_config(cluster, index=index))
        args = _command(data, run, steps, "--strategy", "multi_worker")
        command = [*CHILD_PYTHON, job, str(tmp_path / f"w{index}.npz"), *args]
        workers.append(
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        )
    for worker in workers:
        output, _ = worker.communicate(timeout=900)
        assert worker.returncode == 0, output.decode()[-3000:]
    first, second = (np.load(tmp_path / f"w{index}.npz") for index in range(2))
    names = [k for k in first.files if k != "step"]
    assert int(first["step"]) == int(second["step"]) == steps and len(names) > 40
    assert all(np.array_equal(first[k], second[k]) for k in names)
    # Only the chief wrote: its checkpoints and summary, no worker scratch left.
    assert sorted(os.listdir(run)) == ["checkpoints", "config.json", "last_run.json", "logs"]
    assert sorted(os.listdir(run / "checkpoints")) == ["step-00000002", "step-00000004"]
    assert json.loads((run / "last_run.json").read_text())["status"] == "finished"
    # One process over two CPU devices, the same global batches: from scratch, and resumed
    # from the chief's step-2 checkpoint.
    resumed = tmp_path / "resumed"
    shutil.copytree(run, resumed)
    shutil.rmtree(resumed / "checkpoints" / "step-00000004")
    one = ["--strategy", "mirrored", "--cpu-devices", "2"]
    straight = tmp_path / "straight"
    commands = [["pretrain", *_command(data, where, steps, *one)] for where in (straight, resumed)]
    program = "import json, sys; from electra_tf.cli import main\n"
    program += "sys.exit(any(main(a) for a in json.loads(sys.argv[1])))"
    child = [sys.executable, "-c", program, json.dumps(commands)]
    result = subprocess.run(child, env=backend_child_env("jax"), capture_output=True, timeout=900)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    chief = _trainable(run / "checkpoints" / "step-00000004")
    assert len(chief) == len(names) and all(
        np.array_equal(a, first[str(i)]) for i, a in enumerate(chief)
    )
    for other in (straight, resumed):
        alone = _trainable(other / "checkpoints" / "step-00000004")
        assert max(float(np.max(np.abs(a - b))) for a, b in zip(chief, alone)) <= 1e-5
    assert json.loads((resumed / "last_run.json").read_text())["resumed_from"] == 2


def _launch_pair(data, run, steps):
    """Two JAX workers of one `electra-tf pretrain` run on fresh ports: their Popen objects."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    args = _command(data, run, steps, "--strategy", "multi_worker")
    args += ["--set", "train.collective_timeout=60"]
    return [
        subprocess.Popen(
            [sys.executable, "-m", "electra_tf.cli", "pretrain", *args],
            env=dict(backend_child_env("jax"), TF_CONFIG=_tf_config(cluster, index=index)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(2)
    ]


def _kill_after(workers, checkpoints, step, victim):
    """Kills worker `victim` (SIGKILL) once checkpoint `step` is written; (the survivor's
    exit status, its stderr lines from the CLI, its seconds after the kill, its stderr)."""
    marker, deadline = checkpoints / f"step-{step:08d}", time.monotonic() + 600
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    workers[victim].kill()  # SIGKILL: no goodbye
    killed = time.monotonic()
    survivor = workers[1 - victim]
    _, err = survivor.communicate(timeout=180)  # it must not hang
    seconds = time.monotonic() - killed
    workers[victim].communicate()
    lines = [line for line in err.splitlines() if line.startswith("electra-tf")]
    return survivor.returncode, lines, seconds, err


@pytest.mark.slow
def test_a_jax_worker_killed_mid_run_stops_the_other_and_a_relaunch_resumes(tmp_path):
    """Worker 1 killed after checkpoint 4: process 0 says so and exits 2; relaunched, the
    run resumes from its last checkpoint; then process 0 (JAX's coordinator) killed after a
    later checkpoint: worker 1 says so; relaunched again, the run finishes."""
    data = packed_with_vocabulary(tmp_path / "data", n=64)
    run, steps = tmp_path / "run", 40
    checkpoints = run / "checkpoints"
    code, lines, seconds, err = _kill_after(_launch_pair(data, run, steps), checkpoints, 4, 1)
    assert code == 2 and seconds < 30 and "Traceback" not in err, (code, seconds, err[-3000:])
    (line,) = lines
    assert line.startswith("electra-tf pretrain: A worker of this multi-worker run was lost at")
    assert "(process 1 of 2 stopped answering: its connection closed); " in line
    last = sorted(p.name for p in checkpoints.iterdir() if p.name.startswith("step-"))[-1]
    assert line.endswith(
        "relaunch every worker with the same command: the run resumes from its last "
        f"checkpoint ({last})."
    )
    first = int(last.split("-")[1])
    code, lines, seconds, err = _kill_after(
        _launch_pair(data, run, steps), checkpoints, first + 4, 0
    )
    assert code == 2 and seconds < 30, (code, seconds, err[-3000:])
    assert lines and "(process 0 of 2 stopped answering: its connection closed); " in lines[0], err[
        -3000:
    ]
    assert lines[0].endswith("the run resumes from its last checkpoint."), lines
    for worker in _launch_pair(data, run, steps):  # relaunched: resumes and finishes
        _, err = worker.communicate(timeout=900)
        assert worker.returncode == 0, err[-3000:]
    summary = json.loads((run / "last_run.json").read_text())
    assert summary["status"] == "finished" and summary["step"] == steps
    assert summary["resumed_from"] >= first + 4
    assert f"step-{steps:08d}" in os.listdir(checkpoints)
