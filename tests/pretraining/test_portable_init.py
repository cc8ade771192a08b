"""A run written on TensorFlow (`ckpt.*`) on JAX: `--init` from it, and its resume.

A tiny run trains two steps on TensorFlow (this process; dropout 0, so that the backends'
runs compare), and a copy of it is resumed there to four steps. One JAX child
(`portable_init_child.py`) loads the two-step run with `load_pretrainer`, resumes a copy of
it to four steps, and starts a new run with `--init` from it. The child's loaded weights
must be the TensorFlow checkpoint's exactly, the new run's encoder must start from them, and
the run resumed there must end where the one resumed on TensorFlow did, optimizer state
included.
Here, on TensorFlow: the conversion to `variables.npz` (which resumes bit-identically), and
the refusals without TensorFlow.

The same child then makes test_jax_run.py's straight run (`jax_runs.py`; one JAX import
less), checked here by test_jax_run.py's default tests: its run folder, its discriminator
on TensorFlow and exported to Hugging Face, and a checkpoint that lost bytes.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
from helpers import (
    CHILD_PYTHON,
    FASTER_XLA_FLAGS,
    TESTS,
    backend_child_env,
    cli_compile_cache,
    packed_with_vocabulary,
    pretrainer_values,
    set_flags,
)
from jax_run_child import fixed_batch
from jax_runs import EVERY, SIZES, STEPS, per_step_flops, run_args

from electra_tf.cli import main
from electra_tf.config import ConfigError
from electra_tf.ops import backend
from electra_tf.pretraining.checkpoint import find_checkpoint, load_pretrainer
from electra_tf.pretraining.checkpoint_checks import verify_checkpoint
from electra_tf.pretraining.conversion import convert_to_portable
from electra_tf.pretraining.portable_checkpoint import is_portable
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.tensorflow_checkpoint import read_tensorflow_weights

CHILD = pathlib.Path(__file__).with_name("portable_init_child.py")
# jax_runs.JAX_FLAGS with XLA's older CPU code generator and runtime
# (helpers.FASTER_XLA_FLAGS): each JAX compile of the child about twice as fast.
JAX_FLAGS = f"{FASTER_XLA_FLAGS} --xla_force_host_platform_device_count=2"
SMALL = {
    **SIZES,
    "model.dropout": 0.0,  # TensorFlow's and JAX's dropout masks differ
    "train.warmup_steps": 0,
    "train.learning_rate": 1e-3,
    "train.checkpoint_every": 2,
    "train.log_every": 2,
}


def _pretrain(data, run, steps, *more):
    common = ["--recipe", "tiny", "--data", data, "--batch-size", "4", "--verbose", "0"]
    return ["pretrain", *common, "--output-dir", str(run), "--steps", str(steps), *more]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The TensorFlow run, and what the JAX child made of it; then, in the same child,
    test_jax_run.py's straight JAX run (`straight`, its `outputs` and its `per_step` FLOPs)."""
    folder = tmp_path_factory.mktemp("portable_init")
    data = str(packed_with_vocabulary(folder / "data", n=32))
    tf_run, copy, warm = folder / "tf_run", folder / "tf_copy", folder / "warm"
    assert main(_pretrain(data, tf_run, 2, *set_flags(SMALL))) == 0
    shutil.copytree(tf_run, folder / "tf_four")  # resumed here to four steps: the reference
    assert main(_pretrain(data, folder / "tf_four", 4, *set_flags(SMALL))) == 0
    shutil.copytree(tf_run, copy)
    resume = _pretrain(data, copy, 4, *set_flags(SMALL))
    tiny_step = dict(SMALL, **{"train.learning_rate": 1e-9})
    init = _pretrain(data, warm, 1, "--init", str(tf_run), *set_flags(tiny_step))
    jax_data = packed_with_vocabulary(folder / "jax_data", n=64)
    per_step = per_step_flops(jax_data)
    straight = [
        folder / "straight.npz",
        *run_args(jax_data, folder / "straight", per_step * (STEPS - 0.5)),
    ]
    env = backend_child_env("jax", JAX_FLAGS, TESTS / "pretraining")
    env = cli_compile_cache(env, folder / "xdg")  # the CLI's default folder, under XDG's
    command = [*CHILD_PYTHON, str(CHILD), str(folder / "jax.npz"), str(tf_run), *resume]
    done = subprocess.run(
        [*command, "--", *init, "--", *map(str, straight)],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return {
        "data": data,
        "tf_run": tf_run,
        "tf_four": folder / "tf_four",
        "copy": copy,
        "warm": warm,
        "jax": dict(np.load(folder / "jax.npz")),
        "straight": folder / "straight",
        "outputs": dict(np.load(folder / "straight.npz")),
        "per_step": per_step,
        "compile_cache": folder / "xdg" / "electra-tf" / "jax",
    }


def test_jax_loads_a_tensorflow_checkpoints_weights_exactly(runs):
    jax = runs["jax"]
    assert str(jax["backend"]) == "jax"
    model = load_pretrainer(runs["tf_run"])  # on TensorFlow, through tf.train.Checkpoint
    groups = (
        ("trainable", model.trainable_variables),
        ("non_trainable", model.non_trainable_variables),
    )
    for group, variables in groups:
        for index, variable in enumerate(variables):
            ours = np.asarray(variable.numpy())
            theirs = jax[f"{group}.{index:05d}"]
            if group == "trainable":  # weights: bit for bit
                np.testing.assert_array_equal(theirs, ours, err_msg=variable.path)
            else:  # seed states and counters: same values, each backend's dtype
                np.testing.assert_array_equal(theirs.astype(np.int64), ours.astype(np.int64))
    assert len(model.trainable_variables) > 40
    logits = np.asarray(model.discriminator(fixed_batch(), training=False))
    assert np.std(logits) > 1e-3
    np.testing.assert_allclose(jax["logits"], logits, rtol=1e-5, atol=1e-5)


def test_init_on_jax_from_a_tensorflow_run_starts_from_its_weights(runs):
    jax = runs["jax"]
    assert int(jax["init_status"]) == 0, str(jax["init_error"])
    step = runs["warm"] / "checkpoints" / "step-00000001" / "variables.npz"
    with np.load(step) as warm:
        paths = json.loads(str(warm["paths"]))["trainable"]
        encoder = [i for i, path in enumerate(paths) if "encoder" in path]
        assert len(encoder) > 20
        for index in encoder:  # one step at a learning rate of 1e-9 from the source
            key = f"trainable.{index:05d}"
            np.testing.assert_allclose(warm[key], jax[key], rtol=0, atol=1e-7, err_msg=key)


def test_a_tensorflow_run_resumes_on_jax_with_its_optimizer_state(runs):
    jax = runs["jax"]
    assert int(jax["resume_status"]) == 0, str(jax["resume_error"])[-2000:]
    checkpoints = runs["copy"] / "checkpoints"
    assert sorted(os.listdir(checkpoints)) == ["step-00000002", "step-00000004"]
    assert list((checkpoints / "step-00000002").glob("ckpt.*"))  # TensorFlow's, kept
    assert is_portable(checkpoints / "step-00000004")
    four = pretrainer_values(load_pretrainer(runs["tf_four"]))  # the same resume on TensorFlow
    with np.load(checkpoints / "step-00000004" / "variables.npz") as resumed:
        saved = [key for key in resumed.files if key[:10] in ("trainable.", "optimizer.")]
        assert len(saved) == len(four)
        for key, value in four.items():  # the step counter, the moments, the weights
            np.testing.assert_allclose(resumed[key], value, rtol=1e-5, atol=1e-7, err_msg=key)
    # Teeth: the weights moved from step 2 to 4 by far more than the tolerance, and the
    # moments above hold steps 1-2's gradients, which a resume without them would lack.
    two = pretrainer_values(load_pretrainer(runs["tf_run"]))
    moved = max(np.max(np.abs(four[k] - two[k])) for k in four if k.startswith("trainable."))
    assert moved > 1e-4


def test_a_tensorflow_checkpoint_converts_to_the_portable_form(runs, tmp_path, capsys):
    source = load_pretrainer(runs["tf_run"])
    out = tmp_path / "portable"
    assert main(["import", "--tensorflow-run", str(runs["tf_run"]), "--out", str(out)]) == 0
    step = out / "checkpoints" / "step-00000002"
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["checkpoint"] == str(step)
    assert is_portable(step) and not list(step.glob("ckpt*")) and verify_checkpoint(step) is None
    converted = load_pretrainer(out)  # reads variables.npz, on any backend
    for ours, theirs in zip(converted.variables, source.variables, strict=True):
        np.testing.assert_array_equal(np.asarray(ours.numpy()), np.asarray(theirs.numpy()))
    assert int(converted.optimizer.iterations.numpy()) == 2
    before = sorted(p.name for p in out.rglob("*"))
    with pytest.raises(ConfigError, match=f"{out} is not empty; give --out a new or empty"):
        convert_to_portable(runs["tf_run"], out)  # the CLI prints it as one line, exit 2
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing overwritten
    # The converted run resumes (here on TensorFlow) to the TensorFlow run's resume exactly.
    assert main(_pretrain(runs["data"], out, 4, *set_flags(SMALL))) == 0
    resumed = pretrainer_values(load_pretrainer(out))
    four = pretrainer_values(load_pretrainer(runs["tf_four"]))
    assert resumed.keys() == four.keys()
    for key, value in four.items():
        np.testing.assert_array_equal(resumed[key], value, err_msg=key)


@pytest.mark.parametrize("precision", ["float32", "mixed_float16"])
def test_the_optimizer_state_reads_by_position_as_tensorflow_restores_it(runs, tmp_path, precision):
    """The reader a JAX or PyTorch resume uses, run here: every variable, the moments, the
    step counter and (mixed_float16) the loss scale's, equal to `tf.train.Checkpoint`'s."""
    run = runs["tf_run"]
    if precision != "float32":
        run = tmp_path / precision
        more = ("--precision", precision, *set_flags(SMALL))
        assert main(_pretrain(runs["data"], run, 2, *more)) == 0
    restored = load_pretrainer(run)  # TensorFlow's own reading of ckpt.*
    fresh = ElectraPretrainer(restored.config)
    fresh.compile()
    assert type(fresh.optimizer) is type(restored.optimizer)
    read_tensorflow_weights(fresh, find_checkpoint(run), with_optimizer=True)
    assert len(fresh.variables) == len(restored.variables)
    for ours, theirs in zip(fresh.variables, restored.variables, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=theirs.path)
    optimizer = [v.numpy() for v in fresh.optimizer.variables]
    assert len(optimizer) == len(restored.optimizer.variables) > 2 * len(fresh.trainable_variables)
    for ours, theirs in zip(optimizer, restored.optimizer.variables, strict=True):
        np.testing.assert_array_equal(ours, theirs.numpy(), err_msg=theirs.path)
    if precision == "float32":
        assert int(fresh.optimizer.iterations.numpy()) == 2
    else:  # the tiny model's float16 gradients overflow: the scale halved, no step taken
        assert float(fresh.optimizer.dynamic_scale.numpy()) < fresh.optimizer.initial_scale


def test_without_tensorflow_the_checkpoint_is_refused_with_how_to_convert_it(runs, monkeypatch):
    model = load_pretrainer(runs["tf_run"])
    monkeypatch.setattr(backend, "tensorflow", lambda: None)
    monkeypatch.setattr(backend, "name", lambda: "jax")
    step = runs["tf_run"] / "checkpoints" / "step-00000002"
    refusal = "TensorFlow is not installed here.*electra-tf import --tensorflow-run RUN --out NEW"
    with pytest.raises(ConfigError, match=refusal):
        read_tensorflow_weights(model, step)


# test_jax_run.py's default tests, on the straight run this file's JAX child made.


def test_a_jax_run_leaves_the_run_folder_of_a_tensorflow_run(runs):
    straight = runs["straight"]
    assert str(runs["outputs"]["backend"]) == "jax"
    summary = json.loads((straight / "last_run.json").read_text())
    assert summary["step"] == STEPS and summary["status"] == "finished"
    # The FLOP budget (STEPS - 0.5 steps' worth), not train.num_steps (1000), ended it.
    assert summary["window_logs"]["train_flops"] == pytest.approx(STEPS * runs["per_step"])
    kept = sorted(os.listdir(straight / "checkpoints"))
    assert kept == [f"step-{s:08d}" for s in (STEPS - 2 * EVERY, STEPS - EVERY, STEPS)]
    for name in kept:
        assert verify_checkpoint(straight / "checkpoints" / name) is None
        assert (straight / "checkpoints" / name / "variables.npz").is_file()
    assert any(name.startswith("events.out") for name in os.listdir(straight / "logs"))
    assert json.loads((straight / "config.json").read_text())["train"]["flops_budget"] > 0


def test_a_jax_runs_discriminator_loads_on_tensorflow_with_the_same_outputs(runs):
    model = load_pretrainer(runs["straight"])
    assert int(model.optimizer.iterations.numpy()) == STEPS
    ours = np.asarray(model.discriminator(fixed_batch(), training=False))
    theirs = runs["outputs"]["logits"]
    assert ours.shape == theirs.shape == (8, 16) and np.std(theirs) > 1e-3
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_a_jax_run_exports_to_hugging_face_with_the_same_outputs(runs, tmp_path):
    import torch
    import transformers as hf

    export = ["export", "--checkpoint", str(runs["straight"]), "--out", str(tmp_path)]
    assert main([*export, "--format", "hugging-face"]) == 0
    model = hf.ElectraForPreTraining.from_pretrained(str(tmp_path / "discriminator")).eval()
    batch = {k: torch.tensor(np.asarray(v, np.int64)) for k, v in fixed_batch().items()}
    with torch.no_grad():
        logits = model(
            input_ids=batch["token_ids"],
            attention_mask=batch["padding_mask"],
            token_type_ids=batch["segment_ids"],
        ).logits.numpy()
    np.testing.assert_allclose(logits, runs["outputs"]["logits"], rtol=1e-5, atol=1e-5)


def test_a_jax_checkpoint_that_lost_bytes_is_moved_aside(runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(runs["straight"], run)
    newest = run / "checkpoints" / f"step-{STEPS:08d}"
    data = (newest / "variables.npz").read_bytes()
    (newest / "variables.npz").write_bytes(data[: len(data) // 2])
    assert "variables.npz has" in verify_checkpoint(newest)
    assert find_checkpoint(run, log=lambda line: None).name == f"step-{STEPS - EVERY:08d}"
    assert (run / "checkpoints" / f"step-{STEPS:08d}.corrupt").is_dir()


def test_a_jax_run_keeps_its_compiled_steps_in_the_cache_folder(runs):
    """`pretrain` on JAX writes its compiled programs under $XDG_CACHE_HOME/electra-tf/jax
    (JAX's persistent cache, keyed on program, options, version and device), so that a
    resumed or repeated run skips the compile; test_jax_run.py's slow resume reads them."""
    entries = [path for path in runs["compile_cache"].rglob("*") if path.is_file()]
    assert entries, "no compiled program was kept"
    assert any(path.stat().st_size > 10_000 for path in entries)


def test_finetune_and_pretrain_on_jax_keep_compiled_programs_in_one_folder(tmp_path):
    """Both commands choose their Keras backend in `use_backend`, which on JAX points JAX's
    persistent cache at $XDG_CACHE_HOME/electra-tf/jax, so a fine-tune's next seed or a
    repeated run reads its programs from disk (checked in a child on JAX)."""
    code = (
        "import argparse; from electra_tf.cli.common import use_backend; import jax\n"
        "for command in ('finetune', 'pretrain'):\n"
        "    jax.config.update('jax_compilation_cache_dir', None)\n"
        "    use_backend(argparse.Namespace(backend=None, argv=[]), command)\n"
        "    print(command, jax.config.jax_compilation_cache_dir)"
    )
    env = cli_compile_cache(backend_child_env("jax", JAX_FLAGS), tmp_path)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    folder = tmp_path / "electra-tf" / "jax"
    assert done.stdout.splitlines() == [f"finetune {folder}", f"pretrain {folder}"]


def test_the_compile_cache_is_left_alone_off_jax_and_when_jax_is_told():
    """This process runs TensorFlow: no folder is chosen. On JAX, a folder JAX was given
    wins over the default (checked in a child: JAX cannot be switched in here)."""
    from electra_tf.ops.backend import jax_compile_cache

    assert jax_compile_cache() is None
    code = (
        "import jax; from electra_tf.ops.backend import jax_compile_cache as c; "
        "jax.config.update('jax_compilation_cache_dir', '/tmp/mine'); print(c())"
    )
    env = backend_child_env("jax", JAX_FLAGS)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["/tmp/mine"]
