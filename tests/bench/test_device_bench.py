"""`python -m electra_tf.bench.device`: the GPU machine's benchmark, in its CPU form here.

The child runs with TensorFlow made unimportable (tests/no_tensorflow), as on the lent
GPU machine; the weights it writes are loaded here, on TensorFlow, and must give the
logits it reported.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import FASTER_XLA_FLAGS

ROOT = Path(__file__).resolve().parents[2]
# XLA's CPU compiler without its slow passes, on its older code generator and runtime
# (helpers.FASTER_XLA_FLAGS): the numbers are the same within the bounds, compiling is faster.
FAST_COMPILE = FASTER_XLA_FLAGS
TINY = ("model.vocabulary_size=1200", "model.num_layers=1", "model.hidden_dim=16",
        "model.embedding_dim=8", "model.num_heads=2", "model.intermediate_dim=32")  # fmt: skip


def _run_device_bench(tmp_path, precisions="float32,mixed_bfloat16"):
    rng = np.random.default_rng(3)
    ids = rng.integers(999, 1200, size=(3, 4, 16)).astype("int32")
    ids[..., 0], ids[..., -1] = 101, 102
    batches = tmp_path / "batches.npz"
    np.savez(batches, token_ids=ids, padding_mask=np.ones_like(ids), segment_ids=0 * ids)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "electra_tf.bench.device", "--out", str(out),
               "--device", "cpu", "--recipe", "tiny", "--seq", "16", "--batch-sizes", "2",
               "--rounds", "1", "--warmup", "1", "--steps", "1", "--batches", str(batches),
               "--train-steps", "2", "--train-batch", "4", "--precisions", precisions]  # fmt: skip
    for override in TINY:
        command += ["--set", override]
    path = os.pathsep.join([str(ROOT / "tests" / "no_tensorflow"), str(ROOT)])
    env = dict(os.environ, KERAS_BACKEND="jax", PYTHONPATH=path, CUDA_VISIBLE_DEVICES="",
               XLA_FLAGS=FAST_COMPILE)  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, [json.loads(line) for line in (out / "device.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_the_device_bench_runs_without_tensorflow_and_its_weights_load_here(tmp_path):
    _check_device_bench(tmp_path, ("float32", "tf32", "mixed_bfloat16"))


def test_the_device_bench_runs_without_tensorflow_and_its_weights_load_here_quick(tmp_path):
    """Default twin of `test_the_device_bench_runs_without_tensorflow_and_its_weights_load_here`
    (slow: float32, TF32 and bfloat16 steps): float32 steps only, the same run and reload."""
    _check_device_bench(tmp_path, ("float32",))


def _check_device_bench(tmp_path, precisions):
    """The bench's records for `precisions`, then its weights loaded on TensorFlow give the
    logits the JAX run reported."""
    out, records = _run_device_bench(tmp_path, ",".join(precisions))
    facts, *steps, run = records
    assert facts["kind"] == "device_facts" and facts["tensorflow"] is None
    assert facts["jax_devices"] == ["cpu:0"]
    # Ours and the peer, for each precision, each timed: no error record.
    assert [(r["kind"], r["impl"], r["precision"]) for r in steps] == [
        ("device_step", impl, precision)
        for precision in precisions
        for impl in ("electra_tf_jax", "pytorch")
    ]
    for record in steps:
        assert math.isfinite(record["loss_mean"]) and record["timed_steps"] == 1
        assert record["tokens_per_s"] == 2 * 16 / record["step_s_mean"]
        assert record["step_s_mean"] == record["timed_s"] / record["timed_steps"]
    # Ours as `fit` runs it (the default loop), the peer a step at a time.
    assert [r["loop"] for r in steps] == ["fit", "step"] * len(precisions)
    assert run["kind"] == "device_run" and run["backend"] == "jax" and run["steps"] == 2

    # Back on TensorFlow: the same config and weights give the logits the JAX run reported.
    from electra_tf.config import ElectraConfig
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    config = ElectraConfig.from_json((out / "pretrainer.json").read_text())
    model = ElectraPretrainer(config)
    model.load_weights(str(out / run["weights"]))
    ids = np.load(tmp_path / "batches.npz")
    first = {key: ids[key].reshape(-1, 16)[:2] for key in ids.files}
    logits = np.asarray(model.discriminator(first, training=False))
    np.testing.assert_allclose(logits, np.array(run["probe_logits"]), atol=2e-5)
    # The discriminator's weights alone (what comes back from a GPU machine) do the same.
    alone = ElectraPretrainer(config)
    alone.discriminator(first)
    alone.discriminator.load_weights(str(out / run["discriminator_weights"]))
    again = np.asarray(alone.discriminator(first, training=False))
    np.testing.assert_allclose(again, np.array(run["probe_logits"]), atol=2e-5)


_PRECISION_CHILD = """
import jax, torch
from electra_tf.bench.device import float32_products
assert float32_products("tf32") == "float32"
assert jax.config.jax_default_matmul_precision == "tensorfloat32"
assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
assert float32_products("float32") == "float32"
assert jax.config.jax_default_matmul_precision == "highest"
assert not torch.backends.cuda.matmul.allow_tf32
assert float32_products("mixed_bfloat16") == "mixed_bfloat16"
assert jax.config.jax_default_matmul_precision == "highest"
"""


def test_float32_products_set_the_same_matmul_precision_on_jax_and_pytorch():
    """JAX on a GPU runs float32 products as TF32 unless told; PyTorch does not: the bench
    sets both the same way for each precision name, and gives the Keras policy to build.
    In a child (as every JAX run here): jaxlib and torch stay out of this TensorFlow
    process (test-suite.md, the suite's crash)."""
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", _PRECISION_CHILD], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
