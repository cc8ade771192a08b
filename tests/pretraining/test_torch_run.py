"""`electra-tf pretrain --backend torch`: the portable run (checkpoints, resume, `--init`,
the FLOP budget stop) on PyTorch, one device, as on JAX.

This process runs TensorFlow: a one-step run with dropout 0 (the reference first step,
and a source for `--init`). One PyTorch child (`jax_run_child.py`, which runs the CLI
in-process on whatever KERAS_BACKEND says) then runs, in order: a straight run that its
FLOP budget stops at STEPS; the same command cut by `--max-steps` after the first
checkpoint, then that command again (the resume); the TensorFlow run's first step on
PyTorch; `--init` from the TensorFlow run; a step in mixed_bfloat16; a copy of a
two-step TensorFlow run resumed to four steps; a copy of a mixed_float16 TensorFlow run
resumed (its loss scale calibrating down, then training). Back here, on TensorFlow: the resumed run
against the straight one, the first-step losses, the torch run's weights loaded (as
`export` reads them) and (slow) as `--init` of a TensorFlow run, and the TensorFlow run's
resume on PyTorch against the same resume here, in float32 and in mixed_float16.
"""

import json
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
from helpers import (
    CHILD_PYTHON,
    TESTS,
    backend_child_env,
    packed_with_vocabulary,
    pretrainer_values,
    set_flags,
)
from jax_run_child import fixed_batch

from electra_tf.cli import main
from electra_tf.config import ConfigError, load_recipe
from electra_tf.pretraining import portable_run
from electra_tf.pretraining.checkpoint import load_pretrainer
from electra_tf.pretraining.objectives import train_flops_per_step
from electra_tf.pretraining.run import config_for_data

CHILD = pathlib.Path(__file__).with_name("jax_run_child.py")
STEPS, EVERY = 4, 2
SMALL = {
    "model.num_layers": 1,
    "model.hidden_dim": 8,
    "model.embedding_dim": 8,
    "model.num_heads": 2,
    "model.intermediate_dim": 16,
    "model.max_sequence_length": 16,
    "data.sequence_length": 16,
    "train.num_steps": 1000,  # the FLOP budget stops the straight run at STEPS
    "train.warmup_steps": 0,
    "train.learning_rate": 1e-3,
    "train.checkpoint_every": EVERY,
    "train.log_every": EVERY,
}
# One step from a source's weights (`--init`), dropout 0, at a rate that barely moves them.
INIT = {"model.dropout": 0.0, "train.num_steps": 1, "train.learning_rate": 1e-9}
# A TensorFlow run of two steps, resumed to four on each backend (dropout 0: the backends'
# masks differ).
TWO = dict(SMALL, **{"model.dropout": 0.0, "train.num_steps": 2})
FOUR = dict(TWO, **{"train.num_steps": 4})
# mixed_float16: Keras's first loss scale overflows here, so the first four batches are
# skipped steps (the scale halves each time); the resume to eight trains.
HALF, FLOAT16 = dict(TWO, **{"train.num_steps": 8}), ("--precision", "mixed_float16")


def _pretrain(data, run, values, *more):
    common = ["--recipe", "tiny", "--data", data, "--batch-size", "4", "--verbose", "0"]
    return ["pretrain", *common, "--output-dir", str(run), *set_flags(values), *more]


def _budget(data):
    """The FLOP budget of STEPS steps (so the run stops there, not at train.num_steps)."""
    overrides = [f"data.train_files={data}", "train.batch_size=4"]
    overrides += [f"{key}={value}" for key, value in SMALL.items()]
    return STEPS * train_flops_per_step(
        config_for_data(load_recipe("tiny").override(*overrides), list(SMALL))
    )


def _variables(run, step):
    path = pathlib.Path(run) / "checkpoints" / f"step-{step:08d}" / "variables.npz"
    with np.load(path) as data:
        paths = json.loads(str(data["paths"]))
        return {key: data[key] for key in data.files if key != "paths"}, paths


def _summary(run):
    return json.loads((pathlib.Path(run) / "last_run.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The TensorFlow run, then the PyTorch child's runs (folders by name)."""
    folder = tmp_path_factory.mktemp("torch_run")
    data = str(packed_with_vocabulary(folder / "data", n=32))
    names = ("straight", "resumed", "first", "bfloat16", "tf_source", "tf_first", "tf_init")
    names += ("tf_two", "tf_resumed", "torch_resumed", "tf16", "tf16_resumed", "torch16_resumed")
    runs = {name: folder / name for name in names}
    assert main(_pretrain(data, runs["tf_source"], dict(SMALL, **{"train.num_steps": 1}))) == 0
    assert main(_pretrain(data, runs["tf_two"], TWO)) == 0
    for copy in ("tf_resumed", "torch_resumed"):
        shutil.copytree(runs["tf_two"], runs[copy])
    assert main(_pretrain(data, runs["tf_resumed"], FOUR)) == 0  # the reference resume
    assert main(_pretrain(data, runs["tf16"], FOUR, *FLOAT16)) == 0
    for copy in ("tf16_resumed", "torch16_resumed"):
        shutil.copytree(runs["tf16"], runs[copy])
    assert main(_pretrain(data, runs["tf16_resumed"], HALF, *FLOAT16)) == 0
    source = ("--init", str(runs["tf_source"]))  # the same first weights on both backends
    assert main(_pretrain(data, runs["tf_first"], dict(SMALL, **INIT), *source)) == 0
    budget = dict(SMALL, **{"train.flops_budget": _budget(data)})
    commands = [
        _pretrain(data, runs["straight"], budget),
        _pretrain(data, runs["resumed"], budget, "--max-steps", str(EVERY)),  # cut short
        _pretrain(data, runs["resumed"], budget),  # the same command again: the resume
        _pretrain(data, runs["first"], dict(SMALL, **INIT), *source),  # tf_first's command
        _pretrain(data, runs["bfloat16"], dict(SMALL, **INIT), "--precision", "mixed_bfloat16"),
        _pretrain(data, runs["torch_resumed"], FOUR),  # a TensorFlow run resumed on PyTorch
        _pretrain(data, runs["torch16_resumed"], HALF, *FLOAT16),  # the same, mixed_float16
    ]
    # One torch thread: on these shared cores torch's default threads spin (1.5 s a step, not 0.1).
    env = dict(backend_child_env("torch", "", TESTS / "pretraining"), OMP_NUM_THREADS="1")
    command = [*CHILD_PYTHON, str(CHILD), str(folder / "torch.npz")]
    for args in commands:
        command += ["--", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    runs["data"] = data
    runs["child"] = dict(np.load(folder / "torch.npz"))
    return runs


def test_the_torch_run_stops_on_its_flop_budget_and_leaves_the_run_folder(runs):
    assert str(runs["child"]["backend"]) == "torch"
    summary = _summary(runs["straight"])
    assert (summary["step"], summary["resumed_from"], summary["status"]) == (STEPS, 0, "finished")
    steps = sorted(p.name for p in (runs["straight"] / "checkpoints").iterdir())
    assert steps == [f"step-{EVERY:08d}", f"step-{STEPS:08d}"]
    for step in steps:
        names = {p.name for p in (runs["straight"] / "checkpoints" / step).iterdir()}
        assert names == {"variables.npz", "config.json", "state.json", "record.json"}


def test_a_cut_torch_run_resumes_to_the_straight_runs_weights(runs):
    assert _summary(runs["resumed"])["resumed_from"] == EVERY
    (straight, paths), (resumed, resumed_paths) = (
        _variables(runs["straight"], STEPS),
        _variables(runs["resumed"], STEPS),
    )
    # (Seed generators are named by a per-process counter: only their order is kept.)
    assert resumed_paths["trainable"] == paths["trainable"] and set(resumed) == set(straight)
    assert len([key for key in straight if key.startswith("optimizer.")]) > 40
    for key in straight:  # weights, seed states, step counter, moments: bit for bit
        np.testing.assert_array_equal(resumed[key], straight[key], err_msg=key)


def test_the_first_step_on_torch_is_tensorflows(runs):
    """The same command (`--init` the same weights, dropout 0) on both backends: the same
    losses on the same batch, masks and samples."""
    tf_logs, torch_logs = _summary(runs["tf_first"])["logs"], _summary(runs["first"])["logs"]
    assert tf_logs["loss"] > 1.0 and tf_logs["mlm_loss"] > 1.0
    for name in ("loss", "mlm_loss", "disc_loss"):
        assert torch_logs[name] == pytest.approx(tf_logs[name], rel=1e-5, abs=1e-5), name


def test_a_torch_run_loads_on_tensorflow_with_the_same_outputs(runs):
    model = load_pretrainer(runs["straight"])  # what `electra-tf export` reads
    logits = np.asarray(model.discriminator(fixed_batch(), training=False))
    assert logits.shape == (8, 16) and np.std(logits) > 1e-3
    np.testing.assert_allclose(logits, runs["child"]["logits"], rtol=1e-5, atol=1e-5)


def _encoder_moved(warm, source):
    """The largest change of an encoder weight between two lists of (path, value)."""
    encoder = [i for i, (path, _) in enumerate(source) if "encoder" in path]
    assert len(encoder) > 10 and [p for p, _ in warm] == [p for p, _ in source]
    return max(float(np.max(np.abs(warm[i][1] - source[i][1]))) for i in encoder)


def _trainable(run, step):
    """[(path, value)] of a portable checkpoint's trainable variables."""
    weights, paths = _variables(run, step)
    return [(path, weights[f"trainable.{i:05d}"]) for i, path in enumerate(paths["trainable"])]


def test_init_on_torch_from_a_tensorflow_run_starts_from_its_weights(runs):
    tf_source = load_pretrainer(runs["tf_source"])
    source = [(v.path, v.numpy()) for v in tf_source.trainable_variables]
    assert _encoder_moved(_trainable(runs["first"], 1), source) < 1e-7


@pytest.mark.slow  # one more TensorFlow run; by default, the run's load on TF (above) only
def test_init_on_tensorflow_from_a_torch_run_starts_from_its_weights(runs):
    tf_init = _pretrain(runs["data"], runs["tf_init"], dict(SMALL, **INIT))
    assert main([*tf_init, "--init", str(runs["straight"])]) == 0  # on TensorFlow
    warm = [(v.path, v.numpy()) for v in load_pretrainer(runs["tf_init"]).trainable_variables]
    assert _encoder_moved(warm, _trainable(runs["straight"], STEPS)) < 1e-7


def test_mixed_bfloat16_trains_on_torch_and_keeps_float32_weights(runs):
    summary = _summary(runs["bfloat16"])
    assert summary["step"] == 1 and np.isfinite(summary["logs"]["loss"])
    saved = runs["bfloat16"] / "checkpoints" / "step-00000001" / "config.json"
    assert json.loads(saved.read_text())["train"]["mixed_precision"] == "mixed_bfloat16"
    weights, _ = _variables(runs["bfloat16"], 1)
    assert {weights[k].dtype.name for k in weights if k.startswith("trainable.")} == {"float32"}


def test_a_tensorflow_run_resumes_on_torch_with_its_optimizer_state(runs):
    assert _summary(runs["torch_resumed"])["resumed_from"] == 2
    resumed, _ = _variables(runs["torch_resumed"], 4)
    reference = load_pretrainer(runs["tf_resumed"])  # the same resume on TensorFlow
    assert int(reference.optimizer.iterations.numpy()) == 4
    for key, expected in pretrainer_values(reference).items():  # weights, step, moments
        np.testing.assert_allclose(resumed[key], expected, rtol=1e-5, atol=1e-7, err_msg=key)


def test_a_mixed_float16_tensorflow_run_resumes_on_torch_with_its_loss_scale(runs):
    """The copy resumed on PyTorch ends as the same resume on TensorFlow: the same step and
    loss scale (restored below Keras's first, or it would skip more steps), and weights
    apart by float16's rounding only."""
    start = load_pretrainer(runs["tf16"])
    reference = load_pretrainer(runs["tf16_resumed"])
    step = int(reference.optimizer.iterations.numpy())
    assert int(start.optimizer.iterations.numpy()) == 0 and step >= 3
    assert start.optimizer.dynamic_scale.numpy() < 2.0**15
    resumed, _ = _variables(runs["torch16_resumed"], step)
    expected, initial = pretrainer_values(reference), pretrainer_values(start)
    optimizer = reference.optimizer
    at = [id(v) for v in optimizer.variables].index(id(optimizer.dynamic_scale))
    assert resumed[f"optimizer.{at:05d}"] == optimizer.dynamic_scale.numpy()
    trainable = [key for key in expected if key.startswith("trainable.")]
    moved = np.concatenate([np.ravel(expected[k] - initial[k]) for k in trainable])
    apart = np.concatenate([np.ravel(resumed[k] - expected[k]) for k in trainable])
    assert np.linalg.norm(moved) > 1e-3 and np.linalg.norm(apart) < 0.1 * np.linalg.norm(moved)


def test_what_torch_cannot_run_is_refused_in_one_sentence(monkeypatch, tmp_path, capsys):
    import keras

    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "torch")
    for strategy in ("mirrored", "multi_worker", "tpu"):
        config = load_recipe("tiny").override(f"train.strategy={strategy}")
        with pytest.raises(ConfigError, match=f"strategy='{strategy}' runs on the TensorFlow and"):
            portable_run.check_backend(config)
    portable_run.check_backend(load_recipe("tiny"))  # one device: accepted
    monkeypatch.setattr(keras.config, "backend", lambda: "numpy")
    status = main(["pretrain", "--data", str(tmp_path), "--output-dir", str(tmp_path / "r")])
    assert status == 2 and not (tmp_path / "r").exists()
    assert "runs on the TensorFlow, JAX and PyTorch backends" in capsys.readouterr().err
