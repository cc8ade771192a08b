"""One model code on TensorFlow, JAX and PyTorch: the same batch gives the same step.

`backend_child.py` runs the same tiny pretrainer (same weights, through `.weights.h5`)
under each `KERAS_BACKEND` in its own process. TensorFlow differentiates the generator
and discriminator passes separately with its fast kernels; JAX (Keras's stateless step,
`jax.value_and_grad`) and PyTorch (`backward`) differentiate the total loss of the
portable `keras.ops` forms. The random draws are the same bits everywhere, so masks,
samples and corrupted inputs must be identical, and losses, gradients and the weights
after three `fit` steps equal within 1e-5. JAX also runs the three steps with the batch
split over two CPU devices (`keras.distribution.DataParallel`).

The default suite also checks every pre-training objective here (the default twins of
test_backends_objectives.py, `objectives_child.py`): one JAX and one PyTorch child
(`backends_child.py`) run both scripts' work, while this process runs the TensorFlow
reference of both: two imports of a backend less, and one file's children, not two files'
at once.
"""

import pathlib

import numpy as np
import pytest
from backend_runs import run_child, wait_child
from helpers import FASTER_XLA_FLAGS, functions_run_eagerly
from objectives_checks import (
    CASES,
    DEFAULT_PAIRS,
    JAX_DEFAULT,
    case_outputs,
    check_losses_reports_and_gradients,
    check_masking_and_sampling_have_teeth,
)

CHILD = pathlib.Path(__file__).with_name("backend_child.py")
BOTH_CHILD = pathlib.Path(__file__).with_name("backends_child.py")
BACKENDS = ("tensorflow", "jax", "torch")
# Test-only: XLA's CPU compiler at its lowest optimisation compiles the step in half the
# time (the numbers checked here do not depend on it); two host devices for DataParallel.
JAX_FLAGS = (
    "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
    "--xla_force_host_platform_device_count=2"
)
# The default suite's children also take XLA's older CPU code generator and runtime
# (helpers.FASTER_XLA_FLAGS): each JAX compile about twice as fast; the slow `child` form
# keeps JAX_FLAGS.
QUICK_JAX_FLAGS = f"{FASTER_XLA_FLAGS} --xla_force_host_platform_device_count=2"


def _run(backend, weights, out, sampler):
    return run_child(CHILD, backend, [weights, out, sampler], JAX_FLAGS)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """The default suite's runs: `(batch, objectives, mixed)`, the first two each
    `{backend: outputs}`, of `backend_child.main` and of `objectives_child.main` (every case
    on TensorFlow and PyTorch, `JAX_DEFAULT` on JAX), and `{backend: outputs}` of
    `mixed_float16_child.main` on JAX and PyTorch. TensorFlow runs both in this process
    while one JAX and one PyTorch child (`backends_child.py`) start and run both, then the
    mixed_float16 runs. The TensorFlow reference here runs its steps eagerly (8.5 CPU-s
    less than traced, 18 s; the two agree within 1.2e-7, checked 2026-12-01); the slow
    `child` form of `results` runs it traced, as a user's run does."""
    folder = tmp_path_factory.mktemp("backends")
    weights, objectives = folder / "tiny.weights.h5", folder / "objectives"
    objectives.mkdir()
    np.save(objectives / "unigram_counts.npy", np.arange(131, dtype=np.int64))
    mixed = {b: folder / f"mixed_float16_{b}.npz" for b in ("jax", "torch")}

    def start(backend, cases):
        args = [weights, folder / f"{backend}.npz", "inverse_cdf", objectives, *cases]
        return run_child(BOTH_CHILD, backend, args, QUICK_JAX_FLAGS)

    # All three at once: TensorFlow writes the weights, the others wait for them.
    children = {
        "jax": start("jax", ["--mixed-float16", mixed["jax"], *JAX_DEFAULT]),
        "torch": start("torch", ["--mixed-float16", mixed["torch"], *CASES]),
    }
    import backend_child
    import objectives_child

    with functions_run_eagerly():
        backend_child.main(str(weights), str(folder / "tensorflow.npz"), "inverse_cdf")
        objectives_child.main(str(objectives), CASES)
    for backend, process in children.items():
        wait_child(process, backend)
    batch = {b: dict(np.load(folder / f"{b}.npz")) for b in BACKENDS}
    cases = {b: dict(np.load(objectives / f"{b}.npz")) for b in BACKENDS}
    return batch, cases, {b: dict(np.load(path)) for b, path in mixed.items()}


@pytest.fixture(
    scope="module", params=["in_process", pytest.param("child", marks=pytest.mark.slow)]
)
def results(request, tmp_path_factory):
    """`{backend: outputs}`. The default suite's `in_process` form is `shared`'s (TensorFlow
    in this process); the slow `child` form, every test's full form, runs each backend in a
    child of its own."""
    if request.param == "in_process":
        return request.getfixturevalue("shared")[0]
    folder = tmp_path_factory.mktemp("backends")
    weights = folder / "tiny.weights.h5"
    # All three at once: TensorFlow writes the weights, the others wait for them.
    children = {b: _run(b, weights, folder / f"{b}.npz", "inverse_cdf") for b in BACKENDS}
    for backend, process in children.items():
        wait_child(process, backend)
    return {b: dict(np.load(folder / f"{b}.npz")) for b in BACKENDS}


@pytest.fixture(scope="module")
def quick(shared):
    """The objectives' default runs (every case on TensorFlow, in this process, and on
    PyTorch, `JAX_DEFAULT` on JAX); test_backends_objectives.py's slow `results` runs every
    case on every backend, each in a child of its own: the full form."""
    return shared[1]


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_masks_samples_and_corruption_are_identical(results, backend):
    reference, other = results["tensorflow"], results[backend]
    assert str(other["backend"]) == backend
    identical = ["mlm/targets", "mlm/weights", "mlm/samples", "mlm/predictions"]
    identical += ["discriminator/token_ids", "discriminator/labels", "discriminator/weights"]
    for key in identical:
        np.testing.assert_array_equal(other[key], reference[key], err_msg=key)
    # Something was masked and something replaced, so the comparison has teeth.
    assert reference["mlm/weights"].sum() >= 4 and reference["discriminator/labels"].sum() >= 1


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_losses_and_gradients_are_equal(results, backend):
    reference, other = results["tensorflow"], results[backend]
    for key in ("loss", "mlm/cross_entropy", "discriminator/logits", "discriminator/losses"):
        np.testing.assert_allclose(other[key], reference[key], rtol=1e-5, atol=1e-5, err_msg=key)
    gradients = [k for k in reference if k.startswith("grad/")]
    assert len(gradients) > 20 and set(gradients) == {k for k in other if k.startswith("grad/")}
    for key in gradients:
        np.testing.assert_allclose(other[key], reference[key], rtol=1e-5, atol=1e-5, err_msg=key)
    # The shared word table gets both models' gradients: not zero on any backend.
    table = [k for k in gradients if "word_embeddings" in k]
    assert table and all(np.abs(other[k]).max() > 0 for k in table)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_three_fit_steps_end_at_the_same_weights(results, backend):
    reference, other = results["tensorflow"], results[backend]
    for key in ("fit/step_loss", "fit/step_loss_3"):
        np.testing.assert_allclose(other[key], reference[key], rtol=1e-5, err_msg=key)
    weights = [k for k in reference if k.startswith("weight/")]
    assert weights and set(weights) == {k for k in other if k.startswith("weight/")}
    for key in weights:
        np.testing.assert_allclose(other[key], reference[key], rtol=1e-5, atol=1e-5, err_msg=key)
    # The steps did move: the third step's loss is not the first's.
    assert abs(float(reference["fit/step_loss_3"][0] - reference["fit/step_loss"][0])) > 1e-3


def test_jax_data_parallel_on_two_devices_equals_one_device(results):
    jax = results["jax"]
    assert int(jax["dp/devices"]) == 2
    np.testing.assert_allclose(jax["dp/step_loss"], jax["fit/step_loss"], rtol=1e-5)
    for key in [k for k in jax if k.startswith("weight/")]:
        np.testing.assert_allclose(jax[f"dp/{key}"], jax[key], rtol=1e-5, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_tensorflow_only_objectives_are_refused_in_one_sentence(results, backend):
    message = str(results[backend]["refusal"])
    assert message.startswith("ConfigError: objective.name='bert_mlm' trains on the TensorFlow")
    assert "electra, electra_15" in message and message.count("\n") == 0


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_the_pretrain_command_takes_the_backend_and_reads_its_flags(results, backend):
    """The command no longer refuses JAX or PyTorch: it goes on to read its flags
    (test_jax_run.py and test_torch_run.py train with it)."""
    expected = "--text needs --vocab-file (learn one with electra-tf prepare)."
    assert str(results[backend]["cli_refusal"]) == f"2 electra-tf pretrain: {expected}"


@pytest.mark.parametrize(("backend", "case"), DEFAULT_PAIRS)
def test_losses_reports_and_gradients_are_equal_quick(quick, backend, case):
    """Default twin of test_backends_objectives.py's
    `test_losses_reports_and_gradients_are_equal` (slow: every case on JAX too, in children
    of its own): the same checks on `DEFAULT_PAIRS`."""
    check_losses_reports_and_gradients(quick, backend, case)


@pytest.mark.parametrize(("backend", "case"), DEFAULT_PAIRS)
def test_masking_and_sampling_have_teeth_quick(quick, backend, case):
    """Default twin of test_backends_objectives.py's
    `test_masking_and_sampling_have_teeth` (slow: every case on JAX too, in children of its
    own)."""
    check_masking_and_sampling_have_teeth(quick, backend, case)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_bert_mlm_trains_its_masked_lm_and_nothing_else(quick, backend):
    results = quick  # its cases run on every backend in the default suite
    reference = case_outputs(results["tensorflow"], "bert_mlm")
    other = case_outputs(results[backend], "bert_mlm")
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
    reference = case_outputs(results["tensorflow"], "two_stage")
    other = case_outputs(results[backend], "two_stage")
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


# mixed_float16 on JAX and PyTorch (test_portable_mixed_float16.py's checks of
# `mixed_float16_child.py`, whose runs each backend's child above makes after its own: one
# import less): the tiny pretrainer two steps in float32 and in mixed_float16 from the same
# weights; the mixed run first calibrates its loss scale down (Keras's initial 2**15
# overflows), then trains at 512, then is made to overflow.


@pytest.fixture(scope="module", params=["jax", "torch"])
def runs(shared, request):
    """`mixed_float16_child.main`'s outputs, from the shared child of one backend."""
    return shared[2][request.param] | {"expected": request.param}


def test_mixed_float16_trains_with_float32_master_weights(runs):
    assert str(runs["backend"]) == runs["expected"]
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
