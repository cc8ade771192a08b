"""mixed_float16 on JAX: TensorFlow's dynamic loss scaling in the portable step.

One JAX child (`mixed_float16_child.py`) trains the tiny pretrainer two steps in float32
and in mixed_float16 from the same weights: the mixed run first calibrates its loss scale
down (Keras's initial 2**15 overflows), then trains at 512, then is made to overflow.
"""

import pathlib
import subprocess
import sys

import numpy as np
import pytest
from helpers import FAST_XLA_FLAGS, TESTS, backend_child_env

from electra_tf.config import ConfigError, load_recipe
from electra_tf.pretraining import portable_run

CHILD = pathlib.Path(__file__).with_name("mixed_float16_child.py")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed_float16") / "jax.npz"
    env = backend_child_env("jax", FAST_XLA_FLAGS, TESTS / "pretraining")
    done = subprocess.run(
        [sys.executable, str(CHILD), str(out)], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return dict(np.load(out))


def test_mixed_float16_trains_on_jax_with_float32_master_weights(runs):
    assert str(runs["backend"]) == "jax"
    assert [str(d) for d in runs["mixed_dtypes"]] == ["float32"]
    assert np.all(np.isfinite(runs["mixed_loss"])) and runs["mixed_loss"].shape == (2,)
    # Two finite steps at 512: applied, and the scale grows only after 2,000 of them.
    assert runs["scale_after_two"] == 512.0 and runs["steps_before_overflow"] == 2
    assert np.linalg.norm(runs["mixed_after"] - runs["after_calibration"]) > 1e-3


def test_mixed_float16_follows_float32_within_half_precision(runs):
    np.testing.assert_allclose(runs["mixed_loss"], runs["full_loss"], rtol=1e-2)
    moved = np.linalg.norm(runs["full_after"] - runs["initial"])
    apart = np.linalg.norm(runs["mixed_after"] - runs["full_after"])
    assert moved > 1e-3 and apart < 0.1 * moved, (apart, moved)


def test_the_initial_scale_calibrates_down_skipping_overflowing_steps(runs):
    # 2**15 overflowed twice: halved twice, no step taken, no weight moved.
    assert runs["scale_after_calibration"] == 2.0**13
    assert runs["steps_after_calibration"] == 0
    np.testing.assert_array_equal(runs["after_calibration"], runs["initial"])
    # Above the scale's floor a skip is calibration, not divergence (as on TensorFlow).
    assert np.all(runs["calibration_nonfinite"] == 0.0)


def test_an_overflow_halves_the_scale_and_skips_the_update(runs):
    assert runs["scale_after_overflow"] == pytest.approx(5e29, rel=1e-6)
    assert runs["steps_after_overflow"] == runs["steps_before_overflow"]  # step not taken
    np.testing.assert_array_equal(runs["after_overflow"], runs["mixed_after"])
    assert np.all(runs["overflow_nonfinite"] == 0.0)


def test_mixed_float16_is_refused_on_torch_only(monkeypatch):
    config = load_recipe("tiny").override("train.mixed_precision=mixed_float16")
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "jax")
    portable_run.check_backend(config)
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "torch")
    with pytest.raises(ConfigError, match="mixed_float16' runs on TensorFlow and JAX only"):
        portable_run.check_backend(config)


def test_mixed_float16_without_dropout_is_refused_on_jax_cpu_only(monkeypatch):
    config = load_recipe("tiny").override(
        "train.mixed_precision=mixed_float16", "model.dropout=0.0"
    )
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "jax")
    monkeypatch.setattr(portable_run, "_jax_on_cpu", lambda: True)
    with pytest.raises(ConfigError, match="model.dropout=0 does not compile on JAX's CPU"):
        portable_run.check_backend(config)
    portable_run.check_backend(config.override("model.dropout=0.1"))
    monkeypatch.setattr(portable_run, "_jax_on_cpu", lambda: False)  # a GPU
    portable_run.check_backend(config)
