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
import subprocess
import sys

import numpy as np
import pytest
from finetune_backend_child import KINDS
from helpers import FASTER_XLA_FLAGS, TESTS, backend_child_env

from electra_tf.cli import main
from electra_tf.config import ConfigError
from electra_tf.finetuning import engine

BACKENDS = ("jax", "torch")
CHILD = TESTS / "finetuning" / "finetune_backend_child.py"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finetune_backends")
    children = {}
    for backend in BACKENDS:
        # One torch thread: on these shared cores torch's default threads spin.
        flags = FASTER_XLA_FLAGS if backend == "jax" else ""
        env = dict(backend_child_env(backend, flags, TESTS / "finetuning"), OMP_NUM_THREADS="1")
        children[backend] = subprocess.Popen(
            [sys.executable, str(CHILD), str(folder)], env=env, text=True,
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


def test_a_tensorflow_fine_tunes_epoch_checkpoint_is_refused_elsewhere(tmp_path, monkeypatch):
    (tmp_path / "epoch-0001").mkdir()
    monkeypatch.setattr(engine.backend, "name", lambda: "jax")
    with pytest.raises(ConfigError, match="was written by a fine-tuning run on TensorFlow; resume"):
        engine._read_checkpoint(None, tmp_path / "epoch-0001")


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
