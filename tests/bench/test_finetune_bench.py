"""bench finetune: each run's command carries the options, rounds interleave, ratios pair."""

import json

import pytest

from electra_tf.bench import finetune
from electra_tf.cli import build_parser


def test_a_runs_command_parses_back_to_its_options():
    options = finetune.FinetuneBenchOptions(task="long", epochs=2, seq=256, score_test=True)
    command = finetune._command(options, "pytorch", 3)
    args = build_parser().parse_args(["bench", *command[command.index("finetune") :]])
    parsed = finetune.FinetuneBenchOptions(
        **{f: getattr(args, f) for f in finetune.FinetuneBenchOptions.__dataclass_fields__}
    )
    assert parsed == finetune.FinetuneBenchOptions(
        impl="pytorch", task="long", epochs=2, seq=256, score_test=True, round=3
    )
    assert finetune._seed(parsed) == 3  # round r runs seed + r - 1


def test_rounds_interleave_and_ratios_are_paired(tmp_path):
    speeds = {("electra_tf", 1): 30.0, ("pytorch", 1): 20.0, ("electra_tf", 2): 33.0,
              ("pytorch", 2): 30.0}  # fmt: skip
    order = []

    def launch(command, timeout):
        impl, number = command[command.index("--impl") + 1], int(command[-1])
        order.append((number, impl))
        if impl == "keras_hub":
            return 1, "", "Traceback\nMemoryError"
        record = {
            "kind": "finetune_bench",
            "impl": impl,
            "round": number,
            "wall_seconds": 9.0,
            "examples_per_s": speeds[(impl, number)],
            "peak_rss_mb": 100.0 * number,
        }
        return 0, "noise\n" + json.dumps(record), ""  # fmt: skip

    out = tmp_path / "bench.jsonl"
    records = finetune.compare(
        finetune.FinetuneBenchOptions(), ["electra_tf", "pytorch", "keras_hub"], 2, str(out),
        emit=lambda record: None, launch=launch,
    )  # fmt: skip
    assert order == [(1, "electra_tf"), (1, "pytorch"), (1, "keras_hub"),
                     (2, "keras_hub"), (2, "pytorch"), (2, "electra_tf")]  # fmt: skip
    errors = [r for r in records if r["kind"] == "finetune_bench_error"]
    assert len(errors) == 2 and errors[0]["stderr_tail"] == ["Traceback", "MemoryError"]
    summary = {r["impl"]: r for r in records if r["kind"] == "finetune_bench_summary"}
    ours = summary["electra_tf"]
    assert ours["vs_pytorch"]["median"] == pytest.approx((1.5 + 1.1) / 2)
    assert (ours["vs_pytorch"]["min"], ours["vs_pytorch"]["max"]) == pytest.approx((1.1, 1.5))
    assert ours["examples_per_s"] == {"median": 31.5, "min": 30.0, "max": 33.0}
    assert ours["peak_rss_mb"] == 150.0 and "keras_hub" not in summary
    assert len(out.read_text().splitlines()) == len(records)
