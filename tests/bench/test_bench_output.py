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


def test_step_line_has_the_peer_fields_and_consistent_rates(capsys):
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
    records = _lines(
        capsys, "serving", "--recipe", "tiny", "--batches", "1", "2", "--seq", "16",
        "--iterations", "3", "--min-iterations", "2", "--warmup", "1",
    )  # fmt: skip
    runtimes = {(r["runtime"], r["batch"]) for r in records}
    assert {("saved_model", 1), ("keras_predict", 1), ("saved_model", 2)} <= runtimes
    assert ("saved_model_keras_layers", 2) in runtimes
    # the other kernel layout than "auto" picked here; the tiny model's layer does not widen
    others = {name for name, _ in runtimes if name.endswith("_kernels")}
    assert len(others) == 1
    assert others <= {"saved_model_plain_kernels", "saved_model_transposed_kernels"}
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
def test_kernels_line_pairs_the_two_steps(capsys, against):
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
