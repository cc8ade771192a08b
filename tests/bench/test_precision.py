"""`electra-tf bench precision`: loss curves read back from the runs and compared by seed band."""

import json

import pytest
from helpers import TINY_OVERRIDES, write_packed

from electra_tf.bench.precision import compare_curves
from electra_tf.cli import main


def test_compare_curves_worked_numbers():
    # float32 seeds span [1.0, 1.2] at step 10 and [0.5, 0.6] at step 20.
    reference = [{10: 1.0, 20: 0.5}, {10: 1.2, 20: 0.6}]
    inside = [{10: 1.1, 20: 0.55}, {10: 1.3, 20: 0.65}]  # mean 1.2, 0.6: on the band's edge
    result = compare_curves(reference, inside)
    assert result["steps"] == [10, 20]
    assert result["reference_min"] == [1.0, 0.5] and result["reference_max"] == [1.2, 0.6]
    assert result["other_mean"] == pytest.approx([1.2, 0.6])
    assert result["largest_gap"] == pytest.approx(0.0)
    assert result["largest_spread"] == pytest.approx(0.2)
    assert result["within_spread"]
    # Mean 0.75 at step 20 sits 0.15 above the band, wider than the band (0.1): not alike.
    outside = [{10: 1.1, 20: 0.75}, {10: 1.1, 20: 0.75}]
    result = compare_curves(reference, outside)
    assert result["largest_gap"] == pytest.approx(0.15)
    assert not result["within_spread"]
    with pytest.raises(ValueError, match="share no logged step"):
        compare_curves([{10: 1.0}, {10: 1.0}], [{20: 1.0}])


def test_precision_runs_read_their_logged_loss(tmp_path, capsys):
    data = write_packed(tmp_path / "data", n=32, seq=16)
    overrides = [x for o in TINY_OVERRIDES for x in ("--set", o)]
    assert main([
        "bench", "precision", "--data", data, "--steps", "4", "--every", "2",
        "--seeds", "1,2", "--precisions", "float32,mixed_bfloat16", *overrides,
    ]) == 0  # fmt: skip
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    runs = [r for r in lines if r["kind"] == "precision_run"]
    assert [(r["precision"], r["seed"]) for r in runs] == [
        ("float32", 1), ("float32", 2), ("mixed_bfloat16", 1), ("mixed_bfloat16", 2),
    ]  # fmt: skip
    for record in runs:
        assert record["steps"] == [2, 4]
        assert all(0 < value < 100 for value in record["values"])
    # Different seeds mask differently, so float32's two curves differ.
    assert runs[0]["values"] != runs[1]["values"]
    (summary,) = [r for r in lines if r["kind"] == "precision_summary"]
    assert summary["precision"] == "mixed_bfloat16" and summary["steps"] == [2, 4]
    low, high = summary["reference_min"], summary["reference_max"]
    for index in range(2):
        values = [r["values"][index] for r in runs[:2]]
        assert low[index] == pytest.approx(min(values), abs=1e-4)
        assert high[index] == pytest.approx(max(values), abs=1e-4)
