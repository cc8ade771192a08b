"""The objective cases and their checks, shared by test_backends.py (the default suite's
forms, on the children it shares with the one-batch checks) and test_backends_objectives.py
(the slow twins, on children of their own)."""

import numpy as np

CASES = ["bert_mlm", "replace_mlm", "unigram", "all_tokens_mlm", "adversarial", "two_stage"]
CASES += ["two_stage_2"]
#: integer outputs that must be the same bits on every backend, where a case reports them.
IDENTICAL = ["mlm/targets", "mlm/weights", "mlm/samples", "mlm/predictions"]
IDENTICAL += ["discriminator/token_ids", "discriminator/labels", "discriminator/weights"]
IDENTICAL += ["extra/all_tokens_accuracy", "extra/disc_mlm_accuracy"]
#: JAX compiles one step per objective (seconds each), so the default suite runs these cases
#: on JAX (their fits carry JAX's own step logic: trained-only updates, the retrace at the
#: two-stage switch) and every case on PyTorch; the slow twins run every case on both.
JAX_DEFAULT = ["bert_mlm", "two_stage"]
DEFAULT_PAIRS = [("torch", c) for c in CASES] + [("jax", c) for c in JAX_DEFAULT]


def case_outputs(run, case, prefix=""):
    """`{key: value}` of one case's outputs whose key starts with `prefix`."""
    start = f"{case}/{prefix}"
    return {k[len(case) + 1 :]: v for k, v in run.items() if k.startswith(start)}


def check_losses_reports_and_gradients(results, backend, case):
    """Masks, samples and corruptions identical, losses, reports and gradients within 1e-5."""
    reference = case_outputs(results["tensorflow"], case)
    other = case_outputs(results[backend], case)
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


def check_masking_and_sampling_have_teeth(results, backend, case):
    """Something was masked, and something sampled differs from the original."""
    run = case_outputs(results[backend], case)
    assert run["mlm/weights"].sum() >= 4  # something was masked
    if "mlm/samples" in run:  # something sampled differs from the original
        used = run["mlm/weights"] > 0
        assert (run["mlm/samples"][used] != run["mlm/targets"][used]).any()
