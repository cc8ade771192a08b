"""The benchmarks' JSON lines: the fields the peers' summary reads, and figures that agree."""

import json

import pytest

from electra_tf.cli import main
from electra_tf.config import load_recipe
from electra_tf.pretraining.flops import matmul_step_flops

# Fields the peer benchmarks' `summarize.py` reads from each line (its README, "Adding the
# new package to the same run").
PEER_FIELDS = {
    "kind",
    "peer",
    "variant",
    "batch",
    "round",
    "steps_per_s",
    "tokens_per_s",
    "model_gflops_per_s",
    "impl_gflops_per_s",
    "peak_rss_mb",
    "step_s_median",
    "first_step_s",
    "timed_steps",
    "other_busy_cpus",
}


def _lines(capsys, *argv):
    assert main(["bench", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_step_line_has_the_peer_fields_and_consistent_rates(capsys, steps_run):
    """The step's fields and figures; `[eager]` (the default twin) runs the timed steps
    eagerly, `[traced]` (the full form, `-m slow`) traces them as the benchmark does."""
    small = ("--set", "model.vocabulary_size=1200", "--set", "model.num_layers=1")
    (record,) = _lines(
        capsys, "step", "--recipe", "tiny", "--batch", "2", "--seq", "16", "--warmup", "1",
        "--steps", "3", "--min-steps", "3", "--budget", "0", "--round", "4", *small,
    )  # fmt: skip
    assert PEER_FIELDS <= set(record)
    assert (record["kind"], record["peer"], record["variant"]) == (
        "peer_step",
        "C_electra_tf",
        "graph",
    )
    assert (record["batch"], record["seq_len"], record["round"]) == (2, 16, 4)
    assert record["timed_steps"] == 3
    assert record["tokens_per_s"] == pytest.approx(record["steps_per_s"] * 2 * 16)
    config = load_recipe("tiny").override(
        "model.vocabulary_size=1200", "model.num_layers=1", "data.sequence_length=16"
    )
    flops = matmul_step_flops(config, 2)["step"]
    assert record["model_flops_per_step"] == pytest.approx(flops)
    assert record["model_gflops_per_s"] == pytest.approx(flops * record["steps_per_s"] / 1e9)
    assert record["step_s_min"] <= record["step_s_median"] <= record["step_s_max"]
    assert record["peak_rss_mb"] > 0 and record["loss_last"] > 0


def test_input_line_compares_the_pipeline_with_a_given_step_rate(capsys):
    (record,) = _lines(
        capsys, "input", "--recipe", "tiny", "--batch", "4", "--seq", "16", "--examples",
        "64", "--budget", "0.2", "--repeats", "2", "--model-steps-per-second", "2.5",
    )  # fmt: skip
    assert record["kind"] == "input_pipeline" and len(record["examples_per_s"]) == 2
    assert record["model_examples_per_s"] == pytest.approx(2.5 * 4)
    assert record["input_over_model"] == pytest.approx(
        record["examples_per_s_median"] / record["model_examples_per_s"]
    )
    assert record["masking_ms_per_batch"] > 0


def test_serving_lines_give_each_runtime_against_the_saved_model(capsys):
    small = ("--set", "model.vocabulary_size=1200", "--set", "model.num_layers=1")
    records = _lines(
        capsys, "serving", "--recipe", "tiny", "--batches", "1", "2", "--seq", "16",
        "--iterations", "3", "--min-iterations", "2", "--warmup", "1", *small,
    )  # fmt: skip
    # --set reached the model: the tiny recipe's 4 layers and 30522 words are 1 and 1200 here.
    assert {(r["num_layers"], r["vocabulary_size"]) for r in records} == {(1, 1200)}
    runtimes = {(r["runtime"], r["batch"]) for r in records}
    assert {("saved_model", 1), ("keras_predict", 1), ("saved_model", 2)} <= runtimes
    assert ("saved_model_keras_layers", 2) in runtimes
    # the other kernel layout than "auto" picked here; the tiny model's layer does not widen
    others = {name for name, _ in runtimes if name.endswith("_kernels")}
    assert len(others) == 1
    assert others <= {"saved_model_plain_kernels", "saved_model_transposed_kernels"}
    lanes = {r["runtime"]: r["lanes"] for r in records}
    assert lanes.pop("saved_model_two_lanes") == 2 and lanes.pop("keras_predict") is None
    assert {lanes[n] for n in lanes if n.startswith("saved_model")} == {1}
    for record in records:
        assert record["kind"] == "serving" and record["p50_ms"] <= record["p99_ms"]
        assert record["sequences_per_s"] == pytest.approx(record["batch"] * 1000 / record["p50_ms"])
        if record["runtime"] == "saved_model":
            assert record["p50_vs_saved_model"] == 1.0
        exported = record["runtime"].startswith("saved_model")
        assert record["kernel_layout"] == ("plain" if exported else None)
        if record["runtime"] == "hf_torch":
            assert record["paired_speedup_vs_hf_torch"] == 1.0


def test_serving_runtimes_take_turns_in_a_rotating_order():
    from electra_tf.bench.serving import _time_in_turns

    log = []
    calls = {name: (lambda name=name: log.append(name)) for name in "abc"}
    times = _time_in_turns(calls, iterations=4, warmup=1)
    assert log[:3] == ["a", "b", "c"]  # warm-up, one call each
    assert log[3:] == list("abcbcacababc")
    assert {name: len(seconds) for name, seconds in times.items()} == {"a": 4, "b": 4, "c": 4}


def test_profile_line_ranks_the_step_kernels(capsys):
    small = ("--set", "model.vocabulary_size=1200", "--set", "model.num_layers=1")
    (record,) = _lines(
        capsys, "profile", "--recipe", "tiny", "--batch", "2", "--seq", "16", "--warmup", "1",
        "--steps", "2", "--top", "50", *small,
    )  # fmt: skip
    assert record["kind"] == "op_profile" and record["steps"] == 2
    ops = record["ops"]
    assert ops and all(a["ms_per_step"] >= b["ms_per_step"] for a, b in zip(ops, ops[1:]))
    assert 0.5 < sum(op["share"] for op in ops) <= 1.0 + 1e-6
    assert any("MatMul" in op["op"] for op in ops)  # the dense layers' kernels are there


@pytest.mark.parametrize("against", ["keras", "plain-gradients"])
def test_kernels_line_pairs_the_two_steps(capsys, against, steps_run):
    """`[eager-...]` (the default twins) pair eager steps: the same run and record, but each
    eager step runs the kernels in force when called, so only `[traced-...]` (the full forms,
    `-m slow`) times the baseline's kernels against ours, as the benchmark does."""
    small = ("--set", "model.vocabulary_size=1200", "--set", "model.num_layers=1")
    (record,) = _lines(
        capsys, "kernels", "--recipe", "tiny", "--batch", "2", "--seq", "16", "--pairs", "3",
        "--warmup", "0", "--against", against, *small,
    )  # fmt: skip
    assert record["kind"] == "kernels_ab" and record["pairs"] == 3
    assert record["against"] == against
    assert record["speedup_paired_min"] <= record["speedup_paired_median"]
    assert record["speedup_paired_median"] <= record["speedup_paired_max"]
    assert record["baseline_step_s_median"] > 0 and record["electra_tf_step_s_median"] > 0


def test_product_flops_counts_2mkn_whatever_the_transposes():
    from electra_tf.bench.floor import product_flops

    assert product_flops("MatMul", (3, 5), (5, 7), (False, False)) == 2 * 3 * 5 * 7
    assert product_flops("MatMul", (5, 3), (5, 7), (True, False)) == 2 * 3 * 5 * 7
    assert product_flops("MatMul", (3, 5), (7, 5), (False, True)) == 2 * 3 * 5 * 7
    assert product_flops("MatMul", (5, 3), (7, 5), (True, True)) == 2 * 3 * 5 * 7
    assert product_flops("BatchMatMulV2", (2, 4, 3, 5), (2, 4, 5, 7), (False, False)) == 1680
    assert product_flops("BatchMatMulV2", (2, 4, 5, 3), (2, 4, 7, 5), (True, True)) == 1680


def test_step_products_lists_forward_gradient_and_called_functions():
    import tensorflow as tf

    from electra_tf.bench.floor import step_products

    @tf.function
    def inner(a, b):
        return tf.matmul(a, b)

    @tf.function
    def step(x, w, q):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.matmul(x, w))
        grads = tape.gradient(y, [x, w])
        return grads, inner(q, q)

    x, w, q = tf.ones([4, 3]), tf.ones([3, 2]), tf.ones([2, 5, 5])
    products = step_products(step.get_concrete_function(x, w, q).graph)
    assert products == {
        ("MatMul", (4, 3), (3, 2), (False, False)): 1,  # forward
        ("MatMul", (4, 2), (3, 2), (False, True)): 1,  # input gradient, dy @ w^T
        ("MatMul", (4, 3), (4, 2), (True, False)): 1,  # kernel gradient, x^T @ dy
        ("BatchMatMulV2", (2, 5, 5), (2, 5, 5), (False, False)): 1,  # inside `inner`
    }


def test_floor_line_sums_the_step_products_to_the_model_flops(capsys):
    small = ("--set", "model.vocabulary_size=1200", "--set", "model.num_layers=1")
    (record,) = _lines(
        capsys, "floor", "--recipe", "tiny", "--batch", "2", "--seq", "16", "--chain", "2",
        "--repeats", "2", "--steps", "2", "--top", "1000", *small,
    )  # fmt: skip
    config = load_recipe("tiny").override(
        "model.vocabulary_size=1200", "model.num_layers=1", "data.sequence_length=16"
    )
    flops = matmul_step_flops(config, 2)["step"]
    assert record["kind"] == "matmul_floor"
    assert record["graph_matmul_flops_per_step"] == flops == record["model_flops_per_step"]
    products = record["products"]
    assert len(products) == record["distinct_products"]
    assert sum(p["count"] for p in products) == record["matmul_ops"]
    assert record["floor_s"] == pytest.approx(sum(p["total_ms"] for p in products) / 1e3)
    assert all(a["total_ms"] >= b["total_ms"] for a, b in zip(products, products[1:]))
    assert record["step_over_floor"] == pytest.approx(record["step_s_median"] / record["floor_s"])
    assert record["floor_tokens_per_s"] == pytest.approx(2 * 16 / record["floor_s"])
