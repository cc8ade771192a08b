"""mixed_float16 on JAX: TensorFlow's dynamic loss scaling in the portable step.

Its runs (`mixed_float16_child.py`: the tiny pretrainer two steps in float32 and in
mixed_float16 from the same weights; the loss scale calibrating down, training at 512, an
overflow) are checked in test_backends.py, whose JAX child makes them after its own work
(one JAX import less): test_mixed_float16_trains_on_jax_with_float32_master_weights,
test_mixed_float16_follows_float32_within_half_precision,
test_the_initial_scale_calibrates_down_skipping_overflowing_steps and
test_an_overflow_halves_the_scale_and_skips_the_update. Here: what is refused, in this
process.
"""

import pytest

from electra_tf.config import ConfigError, load_recipe
from electra_tf.pretraining import portable_run


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
