"""Exact resume: a run killed after a checkpoint and restarted ends on the same weights."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers import pretrainer_values, write_packed

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


def test_a_mixed_float16_run_cut_while_its_loss_scale_calibrates_resumes_exactly(tmp_path):
    """Keras's first loss scale (2**15) overflows this model's float16 gradients, so its
    first steps are skipped: the scale halves, the step counter stays, a batch is read.
    A run cut there (`--max-steps`, three batches, still at step 0) resumes from the batches
    it read and ends as the uninterrupted run: the same step, scale and values, bit for bit.
    (Resumed from its step, it re-read those batches and ended a step ahead.)"""
    from electra_tf.cli import main
    from electra_tf.pretraining.checkpoint import find_checkpoint, load_pretrainer
    from electra_tf.pretraining.checkpoint_checks import batches_read

    data = str(write_packed(tmp_path / "data", n=32, seq=16))
    settings = [*SMALL, "model.hidden_dim=8", "model.intermediate_dim=16", "model.dropout=0.1"]
    settings += ["data.sequence_length=16", "train.learning_rate=1e-3", "train.warmup_steps=0"]

    def pretrain(run, *more):
        flags = [arg for setting in settings for arg in ("--set", setting)]
        command = ["pretrain", "--recipe", "tiny", "--data", data, "--output-dir", str(run)]
        command += ["--batch-size", "4", "--steps", "8", "--verbose", "0", *flags, *more]
        assert main([*command, "--precision", "mixed_float16"]) == 0

    straight, cut = tmp_path / "straight", tmp_path / "cut"
    pretrain(straight)
    pretrain(cut, "--max-steps", "3")
    at_cut = find_checkpoint(cut)
    assert (at_cut.name, batches_read(at_cut)) == ("step-00000000", 3)
    assert load_pretrainer(cut).optimizer.dynamic_scale.numpy() == 2.0**12  # halved 3 times
    pretrain(cut)
    a, b = load_pretrainer(straight), load_pretrainer(cut)
    assert int(a.optimizer.iterations.numpy()) == int(b.optimizer.iterations.numpy()) > 0
    assert batches_read(find_checkpoint(cut)) == 8
    a, b = pretrainer_values(a), pretrainer_values(b)
    assert a.keys() == b.keys() and len(a) > 100
    for key in a:  # weights, moments, the step counter and the loss scale
        np.testing.assert_array_equal(b[key], a[key], err_msg=key)


def test_the_batches_read_are_the_steps_of_a_checkpoint_that_did_not_record_them(tmp_path):
    from electra_tf.pretraining.checkpoint_checks import batches_read

    (tmp_path / "state.json").write_text('{"step": 6}')  # written before 2026-11-30
    assert batches_read(tmp_path) == 6
    (tmp_path / "state.json").write_text('{"step": 6, "batches": 9}')  # three steps skipped
    assert batches_read(tmp_path) == 9
