"""`bench peers` and `bench step --impl`: the peers' steps, the schedule and the paired summary."""

import json
import math
import sys

import numpy as np
import pytest
from helpers import FASTER_XLA_FLAGS

from electra_tf.bench import peers
from electra_tf.bench.floor import matmul_ceiling
from electra_tf.bench.peer_steps import premask
from electra_tf.bench.step import StepOptions, run

TINY = ("model.vocabulary_size=1200", "model.num_layers=1")
# XLA's CPU compiler without its slow passes, older code generator and runtime (as in
# test_device_bench.py): the same numbers within the bounds, a faster compile of the JAX step.
FAST_COMPILE = FASTER_XLA_FLAGS


def _step(impl):
    options = StepOptions(
        recipe="tiny", batch=2, seq=16, warmup=1, steps=1, min_steps=1, budget=0,
        overrides=TINY, impl=impl,
    )  # fmt: skip
    return run(options)


def test_schedule_reverses_the_order_in_even_rounds():
    assert peers.schedule(("a", "b", "c"), 3) == [
        (1, "a"), (1, "b"), (1, "c"), (2, "c"), (2, "b"), (2, "a"), (3, "a"), (3, "b"), (3, "c"),
    ]  # fmt: skip


def _record(impl, number, tokens, gflops=10.0, rss=100.0):
    return {
        "kind": "peer_step", "impl": impl, "peer": impl.upper(), "round": number,
        "tokens_per_s": tokens, "model_gflops_per_s": gflops, "peak_rss_mb": rss,
    }  # fmt: skip


def test_summary_pairs_the_ratios_per_round():
    records = [
        {"kind": "matmul_ceiling", "round": 1, "gflops": 100.0},
        {"kind": "matmul_ceiling", "round": 2, "gflops": 50.0},
        _record("a", 1, 100.0), _record("c", 1, 150.0, gflops=40.0, rss=300.0),
        _record("a", 2, 200.0), _record("c", 2, 260.0, gflops=30.0, rss=500.0),
        _record("c", 3, 999.0, gflops=20.0, rss=400.0),  # no partner, no ceiling
        {"kind": "peer_error", "impl": "a", "round": 3, "returncode": 1},
    ]  # fmt: skip
    summary = {line["impl"]: line for line in peers.summarize(records)}
    c = summary["c"]
    assert c["runs"] == 3
    assert c["tokens_per_s"] == {"median": 260.0, "min": 150.0, "max": 999.0}
    # Rounds 1 and 2 only: 150/100 and 260/200.
    assert c["vs_a"] == pytest.approx({"median": 1.4, "min": 1.3, "max": 1.5})
    assert summary["a"]["vs_c"] == pytest.approx(
        {"median": (100 / 150 + 200 / 260) / 2, "min": 100 / 150, "max": 200 / 260}
    )
    # Shares of the round's ceiling: 40/100 and 30/50.
    assert c["of_ceiling"] == pytest.approx({"median": 0.5, "min": 0.4, "max": 0.6})
    assert c["peak_rss_mb"] == 400.0
    assert "1.40 [1.30-1.50]" in peers.table(list(summary.values()))


def test_a_failed_run_is_recorded_and_the_finished_ones_are_kept(tmp_path):
    out = tmp_path / "runs.jsonl"
    calls = []

    def launch(command, timeout):
        calls.append(command)
        if command[1] == "-c":
            return 0, json.dumps({"gflops": 100.0}) + "\n", ""
        impl, number = command[command.index("--impl") + 1], command[command.index("--round") + 1]
        if impl == "b":
            return 1, "", "Traceback\nValueError: the peer broke\n"
        tokens = {"a": 100.0, "c": 120.0}[impl] * int(number)
        return 0, "log line\n" + json.dumps(_record(impl, int(number), tokens)) + "\n", ""

    options = peers.PeersOptions(
        recipe="tiny", batch=2, seq=16, rounds=2, impls=("a", "b", "c"), out=str(out),
        overrides=("model.num_layers=1",),
    )  # fmt: skip
    records = peers.run(options, emit=lambda record: None, launch=launch)
    kinds = [r["kind"] for r in records]
    assert (
        kinds
        == ["machine"]
        + ["matmul_ceiling", "peer_step", "peer_error", "peer_step"] * 2
        + ["peers_summary"] * 2
    )
    assert records[3]["stderr_tail"][-1] == "ValueError: the peer broke"
    assert [json.loads(line) for line in out.read_text().splitlines()] == records
    step = calls[1]
    assert step[:3] == [sys.executable, "-m", "electra_tf.bench"]
    assert step[step.index("--set") + 1] == "model.num_layers=1"
    assert ("--batch", "2") == tuple(step[step.index("--batch") : step.index("--batch") + 2])
    summary = {line["impl"]: line for line in records if line["kind"] == "peers_summary"}
    assert summary["c"]["vs_a"]["median"] == pytest.approx(1.2)


def test_premask_masks_the_asked_count_away_from_the_ends():
    ids = np.arange(2 * 10, dtype="int32").reshape(2, 10) + 1000
    features = premask(ids, num_predictions=3, mask_id=103, mask_token_rate=1.0, seed=5)
    positions = features["masked_lm_positions"]
    assert positions.shape == (2, 3) and (np.diff(positions, axis=1) > 0).all()
    assert positions.min() >= 1 and positions.max() <= 8
    np.testing.assert_array_equal(features["masked_lm_ids"], np.take_along_axis(ids, positions, 1))
    shown = features["input_word_ids"] == 103
    assert shown.sum() == 6 and np.take_along_axis(shown, positions, 1).all()
    kept = premask(ids, 3, 103, mask_token_rate=0.0, seed=5)
    np.testing.assert_array_equal(kept["input_word_ids"], ids)


@pytest.fixture(scope="module")
def ours():
    """`_step("electra_tf")`: our TensorFlow step's record, for the peers' comparisons."""
    return _step("electra_tf")


def test_the_pytorch_peer_is_our_model_in_size_and_starts_at_the_same_loss(ours):
    torch_peer = _step("pytorch")
    assert (torch_peer["peer"], torch_peer["variant"]) == ("B_hf_torch", "lm_gather+cdf")
    # An independent build of the same config: every parameter accounted for.
    assert torch_peer["params_total"] == ours["params_total"]
    # Untrained: the MLM loss is about ln(V), each detection loss about ln 2 (weight 50).
    assert torch_peer["loss_last"] == pytest.approx(math.log(1200) + 50 * math.log(2), rel=0.03)
    assert torch_peer["model_flops_per_step"] == ours["model_flops_per_step"]


def test_the_model_garden_peer_steps_on_premasked_features():
    record = _step("model_garden")
    assert (record["peer"], record["variant"], record["timed_steps"]) == (
        "A_tf_model_garden",
        "graph",
        1,
    )
    assert record["loss_last"] == pytest.approx(math.log(1200) + 50 * math.log(2), rel=0.03)
    assert record["tokens_per_s"] == pytest.approx(record["steps_per_s"] * 2 * 16)


def test_matmul_ceiling_reports_its_best_size():
    ceiling = matmul_ceiling(sizes=(32, 64), chain=2, repeats=2)
    assert set(ceiling["by_size"]) == {32, 64}
    assert ceiling["gflops"] == max(ceiling["by_size"].values()) > 0
    assert ceiling["by_size"][ceiling["size"]] == ceiling["gflops"]


def test_the_jax_step_runs_in_a_process_with_the_jax_backend():
    options = peers.PeersOptions(recipe="tiny", impls=("electra_tf_jax", "pytorch"))
    command = peers._step_command(options, "electra_tf_jax", 2)
    assert command[:2] == ["env", "KERAS_BACKEND=jax"]
    assert command[2:] [:6] == [sys.executable, "-m", "electra_tf.bench", "step", "--impl",
                                "electra_tf_jax"]  # fmt: skip
    assert peers._step_command(options, "pytorch", 2)[0] == sys.executable


def test_our_jax_step_is_our_model_in_size_and_starts_at_the_untrained_loss(ours):
    import os
    import subprocess

    still = (*TINY, "train.learning_rate=1e-9")  # the loss stays the untrained one
    command = peers._step_command(
        peers.PeersOptions(recipe="tiny", batch=2, seq=16, warmup=1, steps=2, min_steps=2,
                           budget=0, overrides=still),
        "electra_tf_jax", 1,
    )  # fmt: skip
    env = dict(os.environ, XLA_FLAGS=FAST_COMPILE)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert (record["peer"], record["variant"], record["timed_steps"]) == (
        "C_electra_tf_jax", "jit", 2,
    )  # fmt: skip
    assert record["params_total"] == ours["params_total"]
    # Untrained: the MLM loss is about ln(V), each detection loss about ln 2 (weight 50);
    # the two timed steps see different batches, so a stuck or skipped step shows too.
    assert record["loss_last"] == pytest.approx(math.log(1200) + 50 * math.log(2), rel=0.1)
    assert record["tokens_per_s"] == pytest.approx(record["steps_per_s"] * 2 * 16)


def test_the_jax_step_refuses_another_backend_in_one_sentence():
    from electra_tf.config import ConfigError

    with pytest.raises(ConfigError, match="KERAS_BACKEND=jax"):
        _step("electra_tf_jax")
