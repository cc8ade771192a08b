"""Every pre-training objective on TensorFlow, JAX and PyTorch: same weights and batch,
same step: the slow twins (every case on every backend, each in a child of its own).

`objectives_child.py` runs all objectives (BERT MLM, Replace MLM, unigram, All-Tokens MLM,
adversarial, two-stage in both stages) once per `KERAS_BACKEND`, in one process each, on
the same `.weights.h5` and batch. TensorFlow differentiates each pass with its fast forms;
JAX and PyTorch differentiate the total loss of the portable `keras.ops` forms and update
only the variables the objective's passes train (`StepOutput.trained`). Masks, samples and
corrupted inputs must be identical, losses, reports and gradients equal within 1e-5, and
two short `fit` runs (BERT MLM; two-stage across its switch) end at the same weights.
The default suite's forms are in test_backends.py (`JAX_DEFAULT` on JAX, every case on
PyTorch, in the children that also run its one-batch checks); the checks are shared
(`objectives_checks.py`).
"""

import pathlib

import numpy as np
import pytest
from backend_runs import run_child, wait_child
from objectives_checks import (
    CASES,
    check_losses_reports_and_gradients,
    check_masking_and_sampling_have_teeth,
)

CHILD = pathlib.Path(__file__).with_name("objectives_child.py")
# Test-only: XLA's CPU compiler at its lowest optimisation compiles in half the time.
JAX_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


def _run(backend, folder, cases=()):
    return run_child(CHILD, backend, [folder, *cases], JAX_FLAGS)


def _results(folder, jax_cases):
    """Every case on TensorFlow and PyTorch, `jax_cases` on JAX, each in a child of its
    own: `{backend: outputs}`."""
    np.save(folder / "unigram_counts.npy", np.arange(131, dtype=np.int64))
    # All three at once: TensorFlow writes each case's weights, the others wait for them.
    children = {"tensorflow": _run("tensorflow", folder)}
    children["jax"] = _run("jax", folder, jax_cases)
    children["torch"] = _run("torch", folder)
    for backend, process in children.items():
        wait_child(process, backend)
    return {b: dict(np.load(folder / f"{b}.npz")) for b in ("tensorflow", "jax", "torch")}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every case on every backend (the slow twins)."""
    return _results(tmp_path_factory.mktemp("objectives"), CASES)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_losses_reports_and_gradients_are_equal(results, backend, case):
    check_losses_reports_and_gradients(results, backend, case)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_masking_and_sampling_have_teeth(results, backend, case):
    check_masking_and_sampling_have_teeth(results, backend, case)


def test_reinforce_losses_and_unigram_sampling_equal_their_tensorflow_forms():
    import tensorflow as tf

    from electra_tf.ops import backend
    from electra_tf.pretraining.objectives.adversarial import reinforce_losses
    from electra_tf.pretraining.objectives.unigram import sample_unigram

    rng = np.random.default_rng(2)
    log_probs = tf.constant(rng.normal(-3.0, 1.0, size=(2, 4)).astype("float32"))
    rewards = tf.constant(rng.uniform(0.0, 3.0, size=(2, 4)).astype("float32"))
    baseline_logits = tf.constant(rng.normal(size=(2, 4)).astype("float32"))
    weights = tf.constant([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])

    def losses_and_gradients():
        with tf.GradientTape() as tape:
            tape.watch([log_probs, rewards, baseline_logits])
            policy, baseline_loss, baseline = reinforce_losses(
                log_probs, rewards, baseline_logits, weights, 5.0
            )
            total = policy + baseline_loss
        grads = tape.gradient(total, [log_probs, rewards, baseline_logits])
        return [
            policy,
            baseline_loss,
            baseline,
            *(tf.zeros([2, 4]) if g is None else g for g in grads),
        ]

    fast = [np.asarray(x) for x in losses_and_gradients()]
    with backend.portable():
        slow = [np.asarray(x) for x in losses_and_gradients()]
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert np.abs(fast[3]).max() > 0 and np.abs(fast[4]).max() == 0  # no gradient to rewards
    cdf = np.cumsum(np.arange(10.0) / 45.0)
    draws = tf.constant(rng.uniform(size=(3, 50)).astype("float32"))
    fast = np.asarray(sample_unigram(cdf, draws))
    with backend.portable():
        slow = np.asarray(sample_unigram(cdf, draws))
    np.testing.assert_array_equal(fast, slow)
    assert fast.shape == (3, 50) and fast.min() >= 1 and fast.max() <= 9  # id 0 has no mass
