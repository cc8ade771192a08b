"""mixed_float16 on JAX and PyTorch: TensorFlow's dynamic loss scaling in the portable step.

Its runs (`mixed_float16_child.py`: the tiny pretrainer two steps in float32 and in
mixed_float16 from the same weights; the loss scale calibrating down, training at 512, an
overflow) are checked in test_backends.py, whose JAX and PyTorch children make them after
their own work (one import less):
test_mixed_float16_trains_with_float32_master_weights,
test_mixed_float16_follows_float32_within_half_precision,
test_the_initial_scale_calibrates_down_skipping_overflowing_steps and
test_an_overflow_halves_the_scale_and_skips_the_update, each on both backends. A
TensorFlow mixed_float16 run resumed on PyTorch: test_torch_run.py. Here: what is
accepted and what is refused, in this process.
"""

import pytest

from electra_tf.config import ConfigError, load_recipe
from electra_tf.pretraining import portable_run


def test_mixed_float16_is_accepted_on_jax_and_torch(monkeypatch):
    config = load_recipe("tiny").override("train.mixed_precision=mixed_float16")
    for name in ("jax", "torch"):
        monkeypatch.setattr(portable_run.keras.config, "backend", lambda name=name: name)
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
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "torch")
    portable_run.check_backend(config)  # PyTorch's CPU runs it (test_torch_run.py)
    monkeypatch.setattr(portable_run.keras.config, "backend", lambda: "jax")
    monkeypatch.setattr(portable_run, "_jax_on_cpu", lambda: False)  # a GPU
    portable_run.check_backend(config)
