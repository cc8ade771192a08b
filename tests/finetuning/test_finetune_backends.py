"""`electra-tf finetune` on JAX and PyTorch: exact resume there, and a kept model that
TensorFlow (where `export` runs) loads and predicts with as the run did.

One child per backend (`finetune_backend_child.py`, both at once) fine-tunes toy files of
every kind from scratch encoders, and a toy run twice, once stopped right after its second
epoch's checkpoint and run again. Its epochs are `variables.npz` checkpoints there (the
weights, the optimizer's moments and step, the dropout seeds; on PyTorch, torch's
generator, put back as the resumed `fit` begins).
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from finetune_backend_child import KINDS
from helpers import CHILD_PYTHON, FASTER_XLA_FLAGS, TESTS, backend_child_env

from electra_tf.cli import main
from electra_tf.finetuning.engine import EpochSelection
from electra_tf.tasks.model_folder import load_finetuned

BACKENDS = ("jax", "torch")
CHILD = TESTS / "finetuning" / "finetune_backend_child.py"


def _tensorflow_run_stopped_after_one_epoch(folder):
    """A run on TensorFlow (toy files, dropout 0) stopped right after epoch 1's checkpoint,
    copied to `resumed-<backend>` for each child and resumed here in `resumed-tensorflow`."""
    from finetune_backend_child import FROM_TENSORFLOW, Killed
    from test_engine import _files, _run

    started = folder / "started"
    vocab, train, dev = _files(started.parent)
    write_epoch = EpochSelection._write_epoch

    def write_then_stop(self, epoch):
        write_epoch(self, epoch)
        self.wait_for_checkpoint()
        if epoch == 1:
            raise Killed

    EpochSelection._write_epoch = write_then_stop
    try:
        with pytest.raises(Killed):
            _run(started, "run", vocab, train, dev, *FROM_TENSORFLOW)
    finally:
        EpochSelection._write_epoch = write_epoch
    for name in ("tensorflow", *BACKENDS):  # each reads the same files, in `folder`
        shutil.copytree(started, folder / f"resumed-{name}")
    resumed = folder / "resumed-tensorflow"
    _run(resumed, "run", vocab, train, dev, *FROM_TENSORFLOW)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finetune_backends")
    _tensorflow_run_stopped_after_one_epoch(folder)
    children = {}
    for backend in BACKENDS:
        # One torch thread: on these shared cores torch's default threads spin.
        flags = FASTER_XLA_FLAGS if backend == "jax" else ""
        env = dict(backend_child_env(backend, flags, TESTS / "finetuning"), OMP_NUM_THREADS="1")
        children[backend] = subprocess.Popen(
            [*CHILD_PYTHON, str(CHILD), str(folder)], env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
    for backend, child in children.items():
        output, _ = child.communicate(timeout=900)
        assert child.returncode == 0, f"{backend}: {output[-4000:]}"
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_killed_fine_tune_resumes_on_the_backend_to_the_uninterrupted_run(folder, backend):
    root = folder / backend
    whole = json.loads((root / "whole" / "results.json").read_text())
    resumed = json.loads((root / "killed" / "results.json").read_text())
    assert [r["history"] for r in resumed["runs"]] == [r["history"] for r in whole["runs"]]
    assert resumed["kept"] == whole["kept"] and len(whole["runs"][0]["history"]) == 3
    assert resumed["backend"] == whole["backend"] == backend  # recorded in results.json
    seed = root / "killed" / "seeds" / "seed-1"
    assert not list(seed.glob("epoch-*")) and not list(seed.glob(".epoch-*"))
    with np.load(root / "kept.npz") as kept:
        names = [name for name in kept.files if name.startswith("whole.")]
        assert len(names) > 20
        for name in names:  # every weight, bit for bit
            np.testing.assert_array_equal(kept[name.replace("whole", "killed")], kept[name])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensorflow_fine_tune_resumes_on_the_backend_with_its_optimizer(folder, backend):
    """The run TensorFlow stopped after epoch 1, resumed on the backend (its epoch read with
    the optimizer's step and moments), ends as the same resume on TensorFlow: the same dev
    scores, and the kept weights within 1e-5 (without the optimizer's state, 3.7e-2 apart)."""
    reference = folder / "resumed-tensorflow" / "run"
    resumed = folder / f"resumed-{backend}" / "run"
    history = [json.loads((run / "results.json").read_text())["runs"][0]["history"]
               for run in (reference, resumed)]  # fmt: skip
    assert len(history[0]) == 3 and history[1][0] == history[0][0]  # epoch 1: TensorFlow's
    for theirs, ours in zip(*history, strict=True):
        assert ours["macro_f1"] == theirs["macro_f1"]
        assert ours["loss"] == pytest.approx(theirs["loss"], abs=1e-5)
    (a, _), (b, _) = load_finetuned(reference), load_finetuned(resumed)
    assert len(a.weights) == len(b.weights) > 20
    for x, y in zip(a.weights, b.weights, strict=True):
        np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-5, err_msg=x.path)


def _dev_file(run_folder):
    return next(p for p in run_folder.parent.iterdir() if p.name.startswith("dev."))


def _in_order(lines, expected):
    """The predicted rows the run scored too, in order (a run leaves out dev rows it cannot
    score: a multi-label row without labels, say; `predict` answers every row)."""
    rows, kept = iter(json.loads(line) for line in lines), []
    for want in expected:
        key = "words" if "words" in want else "text" if "text" in want else "question"
        kept.append(next(row for row in rows if row.get(key) == want[key]))
    return kept


def _close(got, expected, where):
    """Equal strings and lists; numbers (and dicts or lists of them) within 1e-5."""
    if isinstance(expected, dict):
        assert got.keys() == expected.keys(), where
        for key in expected:
            _close(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, abs=1e-5), where
    elif isinstance(expected, list) and expected and isinstance(expected[0], float):
        np.testing.assert_allclose(got, expected, atol=1e-5, err_msg=where)
    else:
        assert got == expected, where


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", [*KINDS, "question_answering"])
def test_the_kept_model_predicts_on_tensorflow_as_the_run_did(folder, backend, kind, capsys):
    """`predict --model RUN --input DEV` here, on TensorFlow, against the run's own dev
    predictions (made on the backend at the end of the run)."""
    run = folder / backend / kind / "run"
    expected = [json.loads(line) for line in (run / "predictions" / "dev.jsonl").open()]
    capsys.readouterr()
    assert main(["predict", "--model", str(run), "--input", str(_dev_file(run))]) == 0
    got = _in_order(capsys.readouterr().out.splitlines(), expected)
    assert len(got) == len(expected) >= 10
    for index, (row, want) in enumerate(zip(got, expected, strict=True)):
        for key in set(want) - {"gold", "row", "id"}:
            _close(row[key], want[key], f"{kind} row {index} {key}")
    # The outputs differ between rows: the model learned something, so equality has teeth.
    numbers = [json.dumps(row.get("probabilities", row.get("score"))) for row in expected]
    assert len(set(numbers)) > 4


def test_the_backend_flag_runs_finetune_again_on_that_backend(monkeypatch, tmp_path):
    calls = []

    def execve(program, command, env):
        calls.append((command, env["KERAS_BACKEND"]))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", execve)
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    argv = ["finetune", "--init", "scratch", "--train", "t.csv", "--dev", "d.csv", "--backend"]
    with pytest.raises(SystemExit):
        main([*argv, "torch"])
    assert calls == [([sys.executable, "-m", "electra_tf.cli", *argv, "torch"], "torch")]


def test_export_under_another_keras_backend_runs_on_tensorflow(folder, tmp_path, capsys):
    """`electra-tf export` with KERAS_BACKEND=jax (a shell set up for training there) writes
    the SavedModel on TensorFlow, which answers as the run's model does."""
    run = folder / "jax" / "multi_label" / "run"
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-m", "electra_tf.cli", "export", "--checkpoint", str(run)]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "export")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written = json.loads(done.stdout[done.stdout.index("{") :])["written"]
    texts = ["the food was good", "bad slow food", "ada met bob in rome"]
    answers = []
    for model in (run, written):
        capsys.readouterr()
        assert main(["predict", "--model", str(model), *texts]) == 0
        answers.append([json.loads(line) for line in capsys.readouterr().out.splitlines()])
    assert len(answers[1]) == len(texts)
    for ours, theirs in zip(*answers, strict=True):
        _close(theirs, ours, "export")
