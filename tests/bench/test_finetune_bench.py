"""bench finetune: each run's command carries the options, rounds interleave, ratios pair."""

import json

import pytest

from electra_tf.bench import finetune
from electra_tf.cli import build_parser


def test_a_runs_command_parses_back_to_its_options():
    options = finetune.FinetuneBenchOptions(
        task="long", epochs=2, seq=256, score_test=True, batches="ours"
    )
    command = finetune._command(options, "pytorch", 3)
    args = build_parser().parse_args(["bench", *command[command.index("finetune") :]])
    parsed = finetune.FinetuneBenchOptions(
        **{f: getattr(args, f) for f in finetune.FinetuneBenchOptions.__dataclass_fields__}
    )
    assert parsed == finetune.FinetuneBenchOptions(
        impl="pytorch", task="long", epochs=2, seq=256, score_test=True, round=3, batches="ours"
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
    assert records[0]["kind"] == "machine" and records[0]["cores"] >= 1  # what it ran on


def test_the_pytorch_loop_given_our_batches_trains_on_the_rows_electra_tf_batches():
    import numpy as np

    from electra_tf.data.batching import batch_dataset

    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 40, size=203)
    mask = (np.arange(40)[None, :] < lengths[:, None]).astype(np.int32)
    features = {"token_ids": mask * 7, "padding_mask": mask, "segment_ids": 0 * mask}
    options = finetune.FinetuneBenchOptions(impl="pytorch", batch=16, seed=4, round=2, epochs=3)
    # What electra_tf's fit trains on: the dataset of the run's seed (round 2: seed 5).
    ours = batch_dataset(features, np.arange(203), batch_size=16, seed=5, epochs=range(3))
    rows = [(x["padding_mask"].shape[1], sorted(y.numpy().tolist())) for x, y in ours]
    options.batches = "ours"
    given = [
        sorted(index.tolist())
        for epoch in (1, 2, 3)
        for index in finetune.peer_batches(options, lengths, epoch, rng)
    ]
    assert [r for _, r in rows] == given
    assert [w for w, _ in rows] == [int(lengths[g].max()) for g in given]  # padded alike
    options.batches = "random"
    shuffled = [sorted(i.tolist()) for i in finetune.peer_batches(options, lengths, 1, rng)]
    assert shuffled != given[: len(shuffled)]
    assert sorted(r for batch in shuffled for r in batch) == list(range(203))
