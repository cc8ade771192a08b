"""Exact resume: a run killed after a checkpoint and restarted ends on the same weights."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers import write_packed

STEPS, EVERY = 60, 10
# The default suite's model: the tiny recipe cut to one hidden-16 layer (the same run, resume
# and checkpoint code; a fraction of the arithmetic). The slow twin runs the tiny recipe itself.
SMALL = (
    "model.num_layers=1", "model.hidden_dim=16", "model.embedding_dim=8", "model.num_heads=2",
    "model.intermediate_dim=32",
)  # fmt: skip


def _command(data, run, model=()):
    return [
        sys.executable,
        "-m",
        "electra_tf.cli",
        "pretrain",
        "--recipe",
        "tiny",
        "--data",
        data,
        "--output-dir",
        run,
        "--steps",
        str(STEPS),
        "--batch-size",
        "16",
        "--verbose",
        "0",
        "--set",
        f"train.checkpoint_every={EVERY}",
        "--set",
        "train.log_every=10",
        "--set",
        "train.warmup_steps=5",
        *[arg for setting in model for arg in ("--set", setting)],
    ]


def _final_weights(run):
    path = os.path.join(run, "checkpoints", f"step-{STEPS:08d}", "ckpt")
    reader = tf.train.load_checkpoint(path)
    names = [n for n in reader.get_variable_to_shape_map() if "OBJECT_GRAPH" not in n]
    return {n: reader.get_tensor(n) for n in names}


def test_killed_run_resumes_to_the_same_weights(tmp_path, capsys):
    """The uninterrupted and the resumed runs go through `electra-tf pretrain` in this
    process (an import of TensorFlow less each); the killed one is a child. The slow twin
    runs all three as children."""
    _kill_and_resume(tmp_path, SMALL, capsys)


@pytest.mark.slow
def test_killed_tiny_recipe_run_resumes_to_the_same_weights(tmp_path):
    _kill_and_resume(tmp_path, ())


def _pretrain(command, env, capsys):
    """`command` run as a child (`capsys` None) or through the CLI's `main` in this
    process: a CompletedProcess-like object with its standard output; raises on failure."""
    if capsys is None:
        return subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    from electra_tf.cli import main

    capsys.readouterr()
    code = main(command[3:])
    output = capsys.readouterr()
    assert code == 0, output.err[-3000:]
    return subprocess.CompletedProcess(command, code, output.out, output.err)


def _kill_and_resume(tmp_path, model, capsys=None):
    """SIGKILL a run after its first checkpoint, restart it: it ends on the weights of the
    uninterrupted run (within 1e-6)."""
    data = write_packed(tmp_path / "data", n=256, seq=64, shards=3)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    straight, interrupted = str(tmp_path / "straight"), str(tmp_path / "interrupted")
    _pretrain(_command(data, straight, model), env, capsys)

    process = subprocess.Popen(
        _command(data, interrupted, model),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = os.path.join(interrupted, "checkpoints", f"step-{EVERY:08d}")
    deadline = time.time() + 300
    while not os.path.exists(first) and time.time() < deadline and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    saved = sorted(os.listdir(os.path.join(interrupted, "checkpoints")))
    assert f"step-{STEPS:08d}" not in saved, "the run finished before it could be killed"

    resumed = _pretrain(_command(data, interrupted, model), env, capsys)
    assert '"resumed_from": ' in resumed.stdout and '"resumed_from": 0' not in resumed.stdout
    a, b = _final_weights(straight), _final_weights(interrupted)
    assert a.keys() == b.keys() and len(a) > 100
    worst = max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in a)
    assert worst <= 1e-6, worst
