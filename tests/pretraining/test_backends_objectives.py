"""Every pre-training objective on TensorFlow, JAX and PyTorch: same weights and batch,
same step.

`objectives_child.py` runs all objectives (BERT MLM, Replace MLM, unigram, All-Tokens MLM,
adversarial, two-stage in both stages) once per `KERAS_BACKEND`, in one process each, on
the same `.weights.h5` and batch (the default suite runs `JAX_DEFAULT` of them on JAX, the
slow twins all). TensorFlow differentiates each pass with its fast forms;
JAX and PyTorch differentiate the total loss of the portable `keras.ops` forms and update
only the variables the objective's passes train (`StepOutput.trained`). Masks, samples and
corrupted inputs must be identical, losses, reports and gradients equal within 1e-5, and
two short `fit` runs (BERT MLM; two-stage across its switch) end at the same weights.
"""

import pathlib

import numpy as np
import pytest
from backend_runs import run_child, wait_child

CHILD = pathlib.Path(__file__).with_name("objectives_child.py")
# Test-only: XLA's CPU compiler at its lowest optimisation compiles in half the time.
JAX_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
CASES = ["bert_mlm", "replace_mlm", "unigram", "all_tokens_mlm", "adversarial", "two_stage"]
CASES += ["two_stage_2"]
#: integer outputs that must be the same bits on every backend, where a case reports them.
IDENTICAL = ["mlm/targets", "mlm/weights", "mlm/samples", "mlm/predictions"]
IDENTICAL += ["discriminator/token_ids", "discriminator/labels", "discriminator/weights"]
IDENTICAL += ["extra/all_tokens_accuracy", "extra/disc_mlm_accuracy"]


def _run(backend, folder, cases=()):
    return run_child(CHILD, backend, [folder, *cases], JAX_FLAGS)


#: JAX compiles one step per objective (seconds each), so the default suite runs these cases
#: on JAX (their fits carry JAX's own step logic: trained-only updates, the retrace at the
#: two-stage switch) and every case on PyTorch; the slow twins run every case on both.
JAX_DEFAULT = ["bert_mlm", "two_stage"]
DEFAULT_PAIRS = [("torch", c) for c in CASES] + [("jax", c) for c in JAX_DEFAULT]


def _results(folder, jax_cases, tensorflow_here=False):
    """Every case on TensorFlow and PyTorch, `jax_cases` on JAX: `{backend: outputs}`;
    `tensorflow_here` runs the TensorFlow cases in this process (`objectives_child.main`,
    while the other children start: an import of TensorFlow less), not in a child."""
    np.save(folder / "unigram_counts.npy", np.arange(131, dtype=np.int64))
    # All three at once: TensorFlow writes each case's weights, the others wait for them.
    children = {} if tensorflow_here else {"tensorflow": _run("tensorflow", folder)}
    children["jax"] = _run("jax", folder, jax_cases)
    children["torch"] = _run("torch", folder)
    if tensorflow_here:
        import objectives_child

        objectives_child.main(str(folder), list(objectives_child.CASES))
    for backend, process in children.items():
        wait_child(process, backend)
    return {b: dict(np.load(folder / f"{b}.npz")) for b in ("tensorflow", "jax", "torch")}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every case on every backend (the slow twins)."""
    return _results(tmp_path_factory.mktemp("objectives"), CASES)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Every case on TensorFlow (in this process) and PyTorch, `JAX_DEFAULT` on JAX (the
    default suite; the slow `results` runs TensorFlow in a child, as every case's full form)."""
    return _results(tmp_path_factory.mktemp("objectives_quick"), JAX_DEFAULT, True)


def _case(run, case, prefix=""):
    """`{key: value}` of one case's outputs whose key starts with `prefix`."""
    start = f"{case}/{prefix}"
    return {k[len(case) + 1 :]: v for k, v in run.items() if k.startswith(start)}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_losses_reports_and_gradients_are_equal(results, backend, case):
    _check_losses_reports_and_gradients(results, backend, case)


@pytest.mark.parametrize(("backend", "case"), DEFAULT_PAIRS)
def test_losses_reports_and_gradients_are_equal_quick(quick, backend, case):
    """Default twin of `test_losses_reports_and_gradients_are_equal` (slow: every case on
    JAX too): the same checks on `DEFAULT_PAIRS`."""
    _check_losses_reports_and_gradients(quick, backend, case)


def _check_losses_reports_and_gradients(results, backend, case):
    reference, other = _case(results["tensorflow"], case), _case(results[backend], case)
    assert str(results[backend]["backend"]) == backend
    assert reference and set(other) == set(reference)
    for key, value in reference.items():
        if key in IDENTICAL:
            np.testing.assert_array_equal(other[key], value, err_msg=key)
        elif not key.startswith(("fit/", "weight/", "initial/")):
            np.testing.assert_allclose(other[key], value, rtol=1e-5, atol=1e-5, err_msg=key)
    gradients = [k for k in reference if k.startswith("grad/")]
    assert len(gradients) > 20
    # Teeth: the loss is positive and some gradient is far from zero on both sides.
    assert float(reference["loss"]) > 0.1
    assert max(np.abs(other[k]).max() for k in gradients) > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_masking_and_sampling_have_teeth(results, backend, case):
    _check_masking_and_sampling_have_teeth(results, backend, case)


@pytest.mark.parametrize(("backend", "case"), DEFAULT_PAIRS)
def test_masking_and_sampling_have_teeth_quick(quick, backend, case):
    """Default twin of `test_masking_and_sampling_have_teeth` (slow: every case on JAX too)."""
    _check_masking_and_sampling_have_teeth(quick, backend, case)


def _check_masking_and_sampling_have_teeth(results, backend, case):
    run = _case(results[backend], case)
    assert run["mlm/weights"].sum() >= 4  # something was masked
    if "mlm/samples" in run:  # something sampled differs from the original
        used = run["mlm/weights"] > 0
        assert (run["mlm/samples"][used] != run["mlm/targets"][used]).any()


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_bert_mlm_trains_its_masked_lm_and_nothing_else(quick, backend):
    results = quick  # its cases run on every backend in the default suite
    reference = _case(results["tensorflow"], "bert_mlm")
    other = _case(results[backend], "bert_mlm")
    np.testing.assert_allclose(other["fit/step_loss"], reference["fit/step_loss"], rtol=1e-5)
    weights = [k for k in reference if k.startswith("weight/")]
    assert weights and set(weights) == {k for k in other if k.startswith("weight/")}
    moved = frozen = 0
    for key in weights:
        np.testing.assert_allclose(other[key], reference[key], rtol=1e-5, atol=1e-5, err_msg=key)
        initial = other["initial/" + key[len("weight/") :]]
        # Its own generator layers and the replaced-token head: no step, no weight decay.
        if key.startswith("weight/generator/") or "discriminator_predictions" in key:
            np.testing.assert_array_equal(other[key], initial, err_msg=key)
            frozen += 1
        elif np.abs(other[key] - initial).max() > 0:
            moved += 1
    assert frozen >= 10 and moved >= 10


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_two_stage_switches_and_copies_on_every_backend(quick, backend):
    results = quick  # its cases run on every backend in the default suite
    reference = _case(results["tensorflow"], "two_stage")
    other = _case(results[backend], "two_stage")
    assert int(other["fit/stage"]) == int(reference["fit/stage"]) == 2
    np.testing.assert_allclose(other["fit/step_loss"], reference["fit/step_loss"], rtol=1e-5)
    weights = [k for k in reference if k.startswith("weight/")]
    for key in weights:
        np.testing.assert_allclose(other[key], reference[key], rtol=1e-5, atol=1e-5, err_msg=key)
    # The discriminator's encoder started from the generator's: one step away from it.
    pairs = [
        (k, k.replace("/discriminator/encoder/", "/generator/encoder/"))
        for k in weights
        if "/discriminator/encoder/" in k
    ]
    assert len(pairs) > 10
    for disc, gen in pairs:
        assert np.abs(other[disc] - other[gen]).max() < 2e-2, disc


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
