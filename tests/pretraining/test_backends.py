"""One model code on TensorFlow, JAX and PyTorch: the same batch gives the same step.

`backend_child.py` runs the same tiny pretrainer (same weights, through `.weights.h5`)
under each `KERAS_BACKEND` in its own process. TensorFlow differentiates the generator
and discriminator passes separately with its fast kernels; JAX (Keras's stateless step,
`jax.value_and_grad`) and PyTorch (`backward`) differentiate the total loss of the
portable `keras.ops` forms. The random draws are the same bits everywhere, so masks,
samples and corrupted inputs must be identical, and losses, gradients and the weights
after three `fit` steps equal within 1e-5. JAX also runs the three steps with the batch
split over two CPU devices (`keras.distribution.DataParallel`).
"""

import pathlib

import numpy as np
import pytest
from backend_runs import run_child, wait_child

CHILD = pathlib.Path(__file__).with_name("backend_child.py")
# Test-only: XLA's CPU compiler at its lowest optimisation compiles the step in half the
# time (the numbers checked here do not depend on it); two host devices for DataParallel.
JAX_FLAGS = (
    "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
    "--xla_force_host_platform_device_count=2"
)


def _run(backend, weights, out, sampler):
    return run_child(CHILD, backend, [weights, out, sampler], JAX_FLAGS)


@pytest.fixture(
    scope="module", params=["in_process", pytest.param("child", marks=pytest.mark.slow)]
)
def results(request, tmp_path_factory):
    """`{backend: outputs}`. The default suite runs the TensorFlow reference in this process
    (`backend_child.main`, while the JAX and PyTorch children start: an import of TensorFlow
    less); the slow `child` form, every test's full form, runs it in a child of its own."""
    folder = tmp_path_factory.mktemp("backends")
    weights = folder / "tiny.weights.h5"
    runs = {}
    # All three at once: TensorFlow writes the weights, the others wait for them.
    backends = ("tensorflow", "jax", "torch")
    if request.param == "in_process":
        backends = ("jax", "torch")
    children = {b: _run(b, weights, folder / f"{b}.npz", "inverse_cdf") for b in backends}
    if request.param == "in_process":
        import backend_child

        backend_child.main(str(weights), str(folder / "tensorflow.npz"), "inverse_cdf")
    for backend, process in children.items():
        wait_child(process, backend)
    for backend in ("tensorflow", "jax", "torch"):
        runs[backend] = dict(np.load(folder / f"{backend}.npz"))
    return runs


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


def test_the_pretrain_command_refuses_torch_and_trains_on_jax(results):
    message = str(results["torch"]["cli_refusal"])
    start = "2 electra-tf pretrain: electra-tf pretrain runs on the TensorFlow and JAX backends"
    assert message.startswith(start)
    assert "KERAS_BACKEND is 'torch'" in message and message.count("\n") == 0
    # On JAX the command goes on to read its flags (test_jax_run.py trains with it).
    message = str(results["jax"]["cli_refusal"])
    expected = "--text needs --vocab-file (learn one with electra-tf prepare)."
    assert message == f"2 electra-tf pretrain: {expected}"
