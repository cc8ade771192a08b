"""`electra-tf pretrain --backend jax`: the same run folder, checkpoints and resume as on TF.

Every JAX run here is a child process (this one runs TensorFlow): `jax_run_child.py` runs
the CLI in-process with KERAS_BACKEND=jax (a straight run; a warm start from it and a
data-parallel run over two CPU devices); the killed and resumed runs are the plain CLI
with `--backend jax` while KERAS_BACKEND says tensorflow (the flag wins). The runs stop on
their FLOP budget (`train.flops_budget`), well before `train.num_steps` (`jax_runs.py`).
Each JAX process pays JAX's import and the step's compilation (about 30 s on 2 idle
cores), so only the slow tests start them, four. The default suite's straight run is made
by test_portable_init.py's one JAX child after its own work, and checked there:
test_a_jax_run_leaves_the_run_folder_of_a_tensorflow_run,
test_a_jax_runs_discriminator_loads_on_tensorflow_with_the_same_outputs,
test_a_jax_run_exports_to_hugging_face_with_the_same_outputs and
test_a_jax_checkpoint_that_lost_bytes_is_moved_aside. Here in the default suite: what is
refused, in this process.
"""

import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import (
    CHILD_PYTHON,
    backend_child_env,
    cli_compile_cache,
    packed_with_vocabulary,
    set_flags,
)
from jax_runs import EVERY, JAX_FLAGS, SIZES, STEPS, per_step_flops, run_args

from electra_tf.cli import common as cli_common
from electra_tf.cli import pretrain as pretrain_cli
from electra_tf.config import ConfigError, load_recipe
from electra_tf.pretraining import portable_checkpoint, portable_run
from electra_tf.pretraining.portable_checkpoint import readable_here

CHILD = pathlib.Path(__file__).with_name("jax_run_child.py")


def _env(backend):
    return backend_child_env(backend, JAX_FLAGS)


def _variables(run, step):
    with np.load(pathlib.Path(run) / "checkpoints" / f"step-{step:08d}" / "variables.npz") as data:
        return {key: data[key] for key in data.files if key != "paths"}, json.loads(
            str(data["paths"])
        )


def _child(out, commands):
    """`jax_run_child.py` running `commands` (CLI argument lists) in turn, started."""
    child = [*CHILD_PYTHON, str(CHILD), str(out)]
    for args in commands:
        child += ["--", *args]
    return subprocess.Popen(
        child, env=_env("jax"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _finish(process):
    output, _ = process.communicate(timeout=900)
    assert process.returncode == 0, output[-4000:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A straight JAX run and its discriminator's logits (one child process), for the slow
    tests (the default suite's is test_portable_init.py's)."""
    folder = tmp_path_factory.mktemp("jax_run")
    data = packed_with_vocabulary(folder / "data", n=64)
    per_step = per_step_flops(data)
    budget = per_step * (STEPS - 0.5)
    _finish(_child(folder / "straight.npz", [run_args(data, folder / "straight", budget)]))
    return {
        "per_step": per_step,
        "budget": budget,
        "data": data,
        "folder": folder,
        "straight": folder / "straight",
        "outputs": dict(np.load(folder / "straight.npz")),
    }


@pytest.fixture(scope="module")
def more_runs(runs):
    """A warm start from the straight run then a data-parallel run (one child process),
    and at the same time a run killed after its first checkpoint and run again with the
    same command."""
    folder, data, budget = runs["folder"], runs["data"], runs["budget"]
    killed, warm = folder / "killed", folder / "warm"
    parallel = ["--strategy", "mirrored", "--cpu-devices", "2", "--max-steps", str(EVERY)]
    init = ["pretrain", "--recipe", "tiny", "--init", str(runs["straight"]), "--data", data]
    init += ["--output-dir", str(warm), "--steps", "1", "--batch-size", "4", "--verbose", "0"]
    init += set_flags({"train.learning_rate": 1e-4, "train.warmup_steps": 0})
    parallel_run = [*run_args(data, folder / "parallel", budget), *parallel]
    first = _child(folder / "more.npz", [init, parallel_run])
    command = [sys.executable, "-m", "electra_tf.cli", *run_args(data, killed, budget)]
    command += ["--backend", "jax"]
    # Both processes keep compiled programs in one cache folder (the CLI's default, under
    # XDG's); with JAX_LOG_COMPILES the resumed one says what it read from there.
    env = dict(cli_compile_cache(_env("tensorflow"), folder / "xdg"), JAX_LOG_COMPILES="1")
    try:
        second = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        checkpoint = killed / "checkpoints" / f"step-{EVERY:08d}"
        deadline = time.time() + 600
        while not checkpoint.exists() and time.time() < deadline and second.poll() is None:
            time.sleep(0.01)
        second.send_signal(signal.SIGKILL)
        second.wait()
        assert checkpoint.exists(), "the run to kill wrote no checkpoint"
        shutil.copytree(checkpoint, folder / "first_checkpoint")  # resuming prunes it
        saved = sorted(os.listdir(killed / "checkpoints"))
        resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        _finish(first)
    finally:
        if first.poll() is None:  # a failure above: do not leave it running
            first.kill()
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    return dict(
        runs,
        killed=killed,
        warm=warm,
        saved_before_kill=saved,
        resumed=json.loads(resumed.stdout[resumed.stdout.index("{") :]),
        resumed_log=resumed.stderr,
        more=dict(np.load(folder / "more.npz")),
    )


def test_a_tensorflow_checkpoint_without_tensorflow_is_refused_in_one_sentence(
    tmp_path, monkeypatch
):
    folder = tmp_path / "step-00000004"
    folder.mkdir()
    (folder / "ckpt.index").write_bytes(b"")
    assert readable_here(folder, "jax") and readable_here(folder, "tensorflow")
    monkeypatch.setattr(portable_checkpoint, "find_spec", lambda name: None)  # not installed
    refusal = "written by a run on TensorFlow .* not installed here.* --tensorflow-run RUN"
    with pytest.raises(ConfigError, match=refusal) as refused:
        readable_here(folder, "jax")
    assert len(str(refused.value).splitlines()) == 1 and "resume NEW here" in str(refused.value)
    assert readable_here(folder, "tensorflow")


@pytest.mark.slow
def test_a_killed_jax_run_resumes_to_bit_identical_weights(more_runs):
    saved, resumed = more_runs["saved_before_kill"], more_runs["resumed"]
    assert f"step-{EVERY:08d}" in saved and f"step-{STEPS:08d}" not in saved, saved
    assert resumed["step"] == STEPS and resumed["resumed_from"] >= EVERY
    a, paths = _variables(more_runs["straight"], STEPS)
    b, _ = _variables(more_runs["killed"], STEPS)
    assert a.keys() == b.keys() and len(paths["trainable"]) > 40 and len(paths["optimizer"]) > 80
    different = [key for key in a if not np.array_equal(a[key], b[key])]
    assert different == []  # weights, moments, step counter and dropout seeds alike
    # The resumed process read compiled programs from the cache the killed one wrote.
    assert "Persistent compilation cache hit for 'jit_" in more_runs["resumed_log"]


@pytest.mark.slow
def test_a_data_parallel_jax_run_matches_one_device(more_runs):
    """Three steps with the batch split over two devices (`--strategy mirrored`) against
    the killed run's first checkpoint (the same three steps on one device)."""
    assert int(more_runs["more"]["devices"]) == 2
    folder = more_runs["folder"]
    one = np.load(folder / "first_checkpoint" / "variables.npz")
    two = np.load(folder / "parallel" / "checkpoints" / f"step-{EVERY:08d}" / "variables.npz")
    trainable = [key for key in one.files if key.startswith("trainable.")]
    assert len(trainable) > 40 and set(trainable) <= set(two.files)
    for key in trainable:
        np.testing.assert_allclose(two[key], one[key], rtol=1e-5, atol=1e-5, err_msg=key)


@pytest.mark.slow
def test_init_on_jax_starts_from_the_runs_weights(more_runs):
    (source, paths), (warm, warm_paths) = (
        _variables(more_runs["straight"], STEPS),
        _variables(more_runs["warm"], 1),
    )
    assert warm_paths["trainable"] == paths["trainable"]
    encoder = [i for i, p in enumerate(paths["trainable"]) if "encoder" in p]
    assert len(encoder) > 20
    # One AdamW step of 1e-4 from the source's weights (the first step moves a weight by
    # at most 1e-4 * (1 - 0.9) / sqrt(1 - 0.999) = 3.2e-4, plus a little weight decay).
    worst = max(
        float(np.max(np.abs(warm[f"trainable.{i:05d}"] - source[f"trainable.{i:05d}"])))
        for i in encoder
    )
    assert worst < 4e-4, worst


def test_a_backend_whose_library_is_missing_is_refused_in_one_sentence(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n: None if n == "jax" else real(n))
    with pytest.raises(
        ConfigError, match=r"--backend jax needs the jax package.*electra-tf\[jax\]"
    ):
        cli_common.check_installed("jax")
    cli_common.check_installed("tensorflow")  # TensorFlow is what the package installs
    monkeypatch.undo()
    cli_common.check_installed("jax")  # installed here (the test extra): nothing said


def test_backend_flag_runs_the_command_again_once_keras_is_loaded(monkeypatch):
    calls = []

    def execve(program, command, env):
        calls.append((program, command, env["KERAS_BACKEND"]))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", execve)
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    argv = ["pretrain", "--output-dir", "x", "--backend", "jax"]
    with pytest.raises(SystemExit):
        cli_common.select_backend("jax", argv)
    assert calls == [(sys.executable, [sys.executable, "-m", "electra_tf.cli", *argv], "jax")]
    cli_common.select_backend("tensorflow", argv)  # this process's backend: nothing to do
    assert len(calls) == 1


@pytest.mark.parametrize(
    "setting, message",
    [
        ("train.strategy=multi_worker", "multi_worker needs the cluster: the TF_CONFIG"),
    ],
)  # mixed_float16 runs on JAX now; its refusals: tests/pretraining/test_portable_mixed_float16.py
def test_what_jax_cannot_run_is_refused_in_one_sentence(monkeypatch, setting, message):
    """multi_worker runs on JAX (tests/pretraining/test_jax_multi_worker.py), given a cluster."""
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "jax")
    for name in (
        "TF_CONFIG",
        "KERAS_DISTRIBUTION_JOB_ADDRESSES",
        "KERAS_DISTRIBUTION_NUM_PROCESSES",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("KERAS_DISTRIBUTION_PROCESS_ID", raising=False)
    with pytest.raises(ConfigError, match=message):
        portable_run.check_backend(load_recipe("tiny").override(setting))
    portable_run.check_backend(load_recipe("tiny"))  # electra on one device: accepted
    portable_run.check_backend(load_recipe("tiny").override("train.strategy=mirrored"))


def test_every_objective_runs_on_jax_and_one_that_could_not_would_be_refused(monkeypatch):
    from electra_tf.pretraining.objectives import OBJECTIVES

    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "jax")
    for (
        name
    ) in OBJECTIVES:  # each is written in keras.ops (tests/pretraining/test_backends_objectives.py)
        portable_run.check_backend(load_recipe("tiny").override(f"objective.name={name}"))
    monkeypatch.setattr(OBJECTIVES["bert_mlm"], "portable", False)
    with pytest.raises(ConfigError, match="objective.name='bert_mlm' trains on the TensorFlow"):
        portable_run.check_backend(load_recipe("tiny").override("objective.name=bert_mlm"))


def test_a_batch_that_does_not_split_over_the_devices_is_refused(monkeypatch):
    monkeypatch.setattr(portable_run.keras.distribution, "list_devices", lambda: ["a", "b"])
    train = load_recipe("tiny").override("train.strategy=mirrored", "train.batch_size=5").train
    with pytest.raises(ConfigError, match="batch_size=5 does not split over the 2 devices"):
        portable_run.set_distribution(train)


def test_cpu_devices_set_the_host_device_count_before_jax_loads(monkeypatch):
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    args = argparse.Namespace(backend="jax", cpu_devices=4)
    pretrain_cli.host_devices(args)
    expected = "--xla_backend_optimization_level=0 --xla_force_host_platform_device_count=4"
    assert os.environ["XLA_FLAGS"] == expected
    pretrain_cli.host_devices(args)  # a count already there wins: nothing added
    assert os.environ["XLA_FLAGS"] == expected


@pytest.mark.slow
def test_a_compiled_program_cut_short_costs_a_compile_not_the_run(more_runs):
    """A kill while JAX writes a compiled program to the cache leaves its entry cut short
    (JAX does not write it atomically): the next run warns, compiles again and trains
    exactly as an uninterrupted run."""
    xdg = more_runs["folder"] / "xdg"
    entries = [path for path in (xdg / "electra-tf" / "jax").iterdir() if path.is_file()]
    assert entries, "the killed and resumed runs kept no compiled program"
    for path in entries:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    out = more_runs["folder"] / "after_a_cut_cache"
    command = [sys.executable, "-m", "electra_tf.cli"]
    command += [*run_args(more_runs["data"], out, more_runs["budget"]), "--backend", "jax"]
    env = cli_compile_cache(_env("tensorflow"), xdg)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Error reading persistent compilation cache entry" in done.stderr
    assert json.loads(done.stdout[done.stdout.index("{") :])["step"] == STEPS
    a, _ = _variables(more_runs["straight"], STEPS)
    b, _ = _variables(out, STEPS)
    assert [key for key in a if not np.array_equal(a[key], b[key])] == []


@pytest.mark.slow  # one more JAX child (three runs; the default suite's twin is TensorFlow's)
def test_a_mixed_float16_jax_run_cut_while_its_loss_scale_calibrates_resumes_exactly(tmp_path):
    """test_resume.py's mixed_float16 case on JAX (dropout 0.1: JAX's CPU compiles float16
    attention only with it): eight batches straight, and cut after three (skipped steps,
    the loss scale calibrating) then resumed, end on the same values, bit for bit."""
    data = packed_with_vocabulary(tmp_path / "data", n=64)
    values = dict(SIZES, **{"train.num_steps": 8, "train.warmup_steps": 0,
                            "train.learning_rate": 1e-3, "train.checkpoint_every": 2,
                            "model.dropout": 0.1})  # fmt: skip
    common = ["pretrain", "--recipe", "tiny", "--data", data, "--batch-size", "4"]
    common += ["--verbose", "0", "--precision", "mixed_float16", *set_flags(values)]
    straight, cut = tmp_path / "straight", tmp_path / "cut"
    commands = [
        [*common, "--output-dir", str(straight)],
        [*common, "--output-dir", str(cut), "--max-steps", "3"],
        [*common, "--output-dir", str(cut)],
    ]
    _finish(_child(tmp_path / "out.npz", commands))
    ends = [json.loads((run / "last_run.json").read_text())["step"] for run in (straight, cut)]
    assert ends[0] == ends[1] > 0, ends
    (a, _), (b, _) = _variables(straight, ends[0]), _variables(cut, ends[0])
    assert a.keys() == b.keys() and len(a) > 100
    for key in a:  # weights, seed states, moments, the step counter and the loss scale
        np.testing.assert_array_equal(b[key], a[key], err_msg=key)
