"""The Keras task classes on JAX and PyTorch: the same fine-tuning as on TensorFlow.

This process (TensorFlow) builds a classifier and a tagger (`task_backend_child.models`),
saves their initial weights, and runs `task_backend_child.run` itself: predict, fit two
epochs on raw strings with the classes' defaults (the "auto" optimizer, the seeded batch
order), evaluate, predict, save a `.keras` file. One child per backend runs the same from
the same weights. Each backend's predictions, evaluation and weights after training must
be TensorFlow's, and its `.keras` file must load here (where `export` runs) with its
outputs.
"""

import subprocess

import keras
import numpy as np
import pytest
import task_backend_child as child
from helpers import CHILD_PYTHON, FASTER_XLA_FLAGS, TESTS, backend_child_env

BACKENDS = ("jax", "torch")
CHILD = TESTS / "finetuning" / "task_backend_child.py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("task_backends")
    models = child.models()
    for name, model in models.items():
        model.save_weights(folder / f"{name}.weights.h5")
    child.run(folder, folder / "tensorflow.npz")
    results = {"tensorflow": dict(np.load(folder / "tensorflow.npz")), "folder": folder}
    results["names"], results["shift_free"] = list(models), _shift_free(models)
    for backend in BACKENDS:
        # One torch thread: on these shared cores torch's default threads spin.
        flags = FASTER_XLA_FLAGS if backend == "jax" else ""
        env = dict(backend_child_env(backend, flags, TESTS / "finetuning"), OMP_NUM_THREADS="1")
        out = folder / f"{backend}.npz"
        done = subprocess.run(
            [*CHILD_PYTHON, str(CHILD), str(folder), str(out)],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
        results[backend] = dict(np.load(out))
    return results


def _shift_free(models) -> set:
    """The span heads' biases: a constant added to every position's logit leaves the span
    softmax as it was, so their gradient is zero but for rounding (about 1e-9), which
    Adam's normalisation turns into steps of a fair fraction of the learning rate, in a
    direction each backend's rounding picks. They change no output (the predictions are
    compared); every other weight is."""
    answerer = models["answerer"]
    return {
        f"answerer.weight.{index:03d}"
        for index, weight in enumerate(answerer.weights)
        if weight.path.endswith(("task_specific_start/bias", "task_specific_end/bias"))
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_fine_tuning_on_the_backend_ends_where_tensorflow_does(runs, backend):
    ours, reference = dict(runs[backend]), runs["tensorflow"]
    assert str(ours["backend"]) == backend
    ours.pop("export_refusal")
    assert ours.keys() == reference.keys()
    shift_free = runs["shift_free"]
    assert len(shift_free) == 2
    for key, value in reference.items():
        if key == "backend" or key in shift_free:
            continue
        np.testing.assert_allclose(ours[key], value, rtol=1e-5, atol=2e-6, err_msg=key)
    for name in runs["names"]:  # teeth: training moved every model's outputs
        moved = np.max(np.abs(reference[f"{name}.after"] - reference[f"{name}.before"]))
        assert moved > 1e-3, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_saved_on_the_backend_loads_on_tensorflow_with_its_outputs(runs, backend):
    for name in runs["names"]:
        model = keras.saving.load_model(runs["folder"] / f"{name}.{backend}.keras")
        outputs = child.outputs(model, child.data()[name][1])
        np.testing.assert_allclose(outputs, runs[backend][f"{name}.after"], atol=1e-6, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_savedmodel_export_off_tensorflow_is_refused_in_one_sentence(runs, backend):
    refusal = str(runs[backend]["export_refusal"])
    assert len(refusal.splitlines()) == 1, refusal
    assert f"on TensorFlow, and Keras runs on {backend} here" in refusal
    assert "model.save" in refusal and "KERAS_BACKEND=tensorflow" in refusal
    assert not (runs["folder"] / "export").exists()  # nothing written
