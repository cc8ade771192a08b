"""The PyTorch cross-check: the reference's masking rule, and a short run from the CLI."""

import json

import pytest
import torch
from helpers import SPECIAL, TINY_OVERRIDES, write_packed

from electra_tf.cli import main
from electra_tf.config import ConfigError, load_recipe
from electra_tf.experiments.torch_reference import (
    learning_rate_factor,
    reference_masks,
    torch_reference_run,
)
from electra_tf.pretraining.optimizer import WarmupLinearDecay
from electra_tf.pretraining.run import config_for_data

CLS, SEP, PAD = SPECIAL["cls"], SPECIAL["sep"], SPECIAL["pad"]


def test_reference_masks_choose_exactly_round_of_real_tokens_and_never_specials():
    # Row 0: 10 real tokens (CLS, 7 words, SEP, word) -> round(10 * 0.3) = 3 positions.
    # Row 1: 6 real tokens -> round(1.8) = 2. Row 2: only CLS SEP -> no candidate, none chosen.
    # Row 3: 20 real tokens -> round(6) = 6, clamped to max_predictions = 4.
    ids = torch.tensor(
        [
            [CLS, 7, 8, 9, 10, 11, 12, 13, SEP, 14] + [PAD] * 10,
            [CLS, 7, 8, SEP, 9, SEP] + [PAD] * 14,
            [CLS, SEP] + [PAD] * 18,
            [CLS] + list(range(7, 25)) + [SEP],
        ]
    )
    mask = (ids != PAD).long()
    mask[2, :2] = 1
    for seed in range(20):
        chosen = reference_masks(
            ids, mask, [CLS, SEP, PAD], 0.3, 4, torch.Generator().manual_seed(seed)
        )
        assert chosen.sum(-1).tolist() == [3, 2, 0, 4]
        assert not chosen[(ids == CLS) | (ids == SEP) | (mask == 0)].any()


def test_reference_masks_are_uniform_over_candidates():
    ids = torch.tensor([[CLS, 7, 8, 9, 10, SEP]])
    mask = torch.ones_like(ids)
    hits = torch.zeros(6)
    for seed in range(400):
        hits += reference_masks(
            ids, mask, [CLS, SEP], 0.34, 8, torch.Generator().manual_seed(seed)
        )[0]
    # round(6 * 0.34) = 2 of the 4 words each time: each word is chosen half the time.
    assert hits[0] == hits[5] == 0
    assert torch.all((hits[1:5] / 400 - 0.5).abs() < 0.1)


def _config(folder, *extra):
    config = load_recipe("tiny").override(
        f"data.train_files={folder}", *TINY_OVERRIDES, "train.warmup_steps=1", *extra
    )
    return config_for_data(config)


def test_cli_writes_the_held_out_curve(tmp_path, capsys):
    folder = write_packed(tmp_path / "data", n=48, seq=16)
    out = tmp_path / "out"
    code = main(
        ["experiment", "torch-reference", "--data", folder, "--output-dir", str(out),
         "--eval-every", "2", "--threads", "1", "--set", "train.num_steps=5",
         *(arg for value in TINY_OVERRIDES for arg in ("--set", value))]
    )  # fmt: skip
    assert code == 0
    result = json.loads((out / "torch_reference.json").read_text())
    assert [point["step"] for point in result["curve"]] == [2, 4, 5]
    for point in result["curve"]:
        assert 0.0 <= point["auc"] <= 1.0 and 0.0 <= point["mlm_accuracy"] <= 1.0
    assert result["held_out_file"].endswith("shard-001.tfrecord")
    assert "held-out AUC" in capsys.readouterr().out


def test_a_run_is_reproducible_from_its_seed(tmp_path):
    folder = write_packed(tmp_path / "data", n=48, seq=16)
    config = _config(folder, "train.num_steps=4")

    def curve():
        points = torch_reference_run(config, eval_every=2, threads=1, log=lambda line: None)
        return [(p["step"], p["auc"], p["mlm_accuracy"]) for p in points["curve"]]

    first = curve()
    assert [step for step, _, _ in first] == [2, 4]
    assert curve() == first


def test_other_objectives_and_single_shards_are_refused(tmp_path):
    folder = write_packed(tmp_path / "data", n=16, seq=16)
    with pytest.raises(ConfigError, match="objective.name=electra only"):
        torch_reference_run(_config(folder, "objective.name=bert_mlm"))
    single = write_packed(tmp_path / "one", n=16, seq=16, shards=1)
    with pytest.raises(ConfigError, match="one shard"):
        torch_reference_run(_config(single))


def test_schedule_matches_ours_step_for_step():
    # Both count the first update as step 0, whose rate is 0 during warmup (the check
    # used to be one step ahead: (step + 1) / warmup).
    ours = WarmupLinearDecay(1.0, total_steps=20, warmup_steps=4)
    for step in range(0, 24):
        assert learning_rate_factor(step, 20, 4) == pytest.approx(float(ours(step)), abs=1e-7)
    assert learning_rate_factor(0, 20, 4) == 0.0 and learning_rate_factor(2, 20, 4) == 0.45
    assert learning_rate_factor(5, 10, 0) == 0.5  # no warmup: decay only
