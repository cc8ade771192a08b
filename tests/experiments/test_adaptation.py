"""Objectives adapting one encoder at equal FLOPs: cells, resumption, the summary, the verdict."""

import dataclasses
import json

import numpy as np
import pytest
import torch
import transformers as hf
from helpers import VOCAB, functions_run_eagerly
from test_efficiency import WORDS, _corpus

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import write_vocabulary
from electra_tf.experiments.adaptation import AdaptationOptions, adaptation_experiment, ordering
from electra_tf.experiments.report import adaptation_plot, adaptation_positions


def _start(tmp_path):
    config = hf.BertConfig(
        vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    folder = tmp_path / "start"
    hf.BertModel(config).save_pretrained(str(folder))
    write_vocabulary(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS], folder / "vocab.txt")
    return str(folder)


def test_ordering_says_win_loss_or_within_the_spread():
    summary = [
        {"objective": "electra", "budget": 1.0, "test_mean": 0.80, "test_std": 0.01},
        {"objective": "bert_mlm", "budget": 1.0, "test_mean": 0.75, "test_std": 0.02},
        {"objective": "electra_15", "budget": 1.0, "test_mean": 0.79, "test_std": 0.02},
        {"objective": "replace_mlm", "budget": 1.0, "test_mean": 0.84, "test_std": 0.03},
    ]
    assert ordering(summary, 1.0) == {"bert_mlm": True, "electra_15": None, "replace_mlm": False}
    assert ordering(summary, 2.0) == {}


def _row(objective, budget, flops, mean):
    return {
        "objective": objective,
        "budget": budget,
        "train_flops": flops,
        "test_mean": mean,
        "test_std": 0.01,
    }


def test_plot_positions_are_flops_for_several_budgets_and_categories_for_one(tmp_path):
    several = [
        _row("electra", 2e12, 2.1e12, 0.7),
        _row("electra", 1e12, 1.05e12, 0.6),
        _row("bert_mlm", 1e12, 1.01e12, 0.5),
    ]
    positions, single = adaptation_positions(several)
    assert single is None
    xs, line = positions["electra"]
    assert xs == [1.05e12, 2.1e12] and [r["test_mean"] for r in line] == [0.6, 0.7]
    assert positions["bert_mlm"][0] == [1.01e12]
    # One budget: each objective's actual FLOPs differ slightly (a step's cost), and a log
    # axis over 1e12..1.01e12 is unreadable, so the objectives become categories.
    one = [
        _row("electra", 1e12, 1.0e12, 0.6),
        _row("bert_mlm", 1e12, 1.01e12, 0.5),
        _row("replace_mlm", 1e12, 1.02e12, 0.55),
    ]
    positions, single = adaptation_positions(one)
    assert single == 1e12
    assert {o: xs for o, (xs, _) in positions.items()} == {
        "electra": [0],
        "bert_mlm": [1],
        "replace_mlm": [2],
    }
    reference = {"start_test": 0.5, "bow_test": 0.55}
    for name, summary in (("several", several), ("one", one)):
        adaptation_plot(summary, reference, tmp_path / f"{name}.png", name)
        assert (tmp_path / f"{name}.png").stat().st_size > 1000


@pytest.mark.slow
def test_cells_run_once_and_the_table_has_every_objective_and_budget_over_two_finetune_seeds(
    tmp_path,
):
    """The full form of `test_cells_run_once_and_the_table_has_every_objective_and_budget`:
    the second view fine-tunes two seeds of every row."""
    _check_the_adaptation_experiment(tmp_path, finetune_seeds=2)


def test_cells_run_once_and_the_table_has_every_objective_and_budget(tmp_path):
    """Cells, resumption, table and the second view with ONE fine-tuning seed per row (half
    the fine-tunings), every step run eagerly; the full form, two seeds and its steps traced,
    is `..._every_objective_and_budget_over_two_finetune_seeds`."""
    with functions_run_eagerly():
        _check_the_adaptation_experiment(tmp_path, finetune_seeds=1)


def _check_the_adaptation_experiment(tmp_path, finetune_seeds):
    data, movie = _corpus(tmp_path)
    options = AdaptationOptions(
        data_dir=data,
        output_dir=str(tmp_path / "out"),
        start=_start(tmp_path),
        objectives=("electra", "bert_mlm"),
        budgets=(1.0, 2e7),  # 1 step each; 10 (electra) and 17 (bert_mlm) steps
        seeds=2,
        movie_file=movie,
        overrides=("train.batch_size=4", "model.generator_size_fraction=0.5"),
        random_seeds=2,
    )
    lines = []
    result = adaptation_experiment(options, log=lines.append)
    rows = result["rows"]
    assert len(rows) == 2 * 2 * 2  # objectives x seeds x budgets
    first = [r for r in rows if r["objective"] == "electra" and r["budget"] == 1.0]
    assert [r["steps"] for r in first] == [1, 1]  # the smallest budget is one step
    for row in result["summary"]:
        tests = [
            r["test_accuracy"]
            for r in rows
            if r["objective"] == row["objective"] and r["budget"] == row["budget"]
        ]
        assert row["test_mean"] == pytest.approx(np.mean(tests))
        assert row["test_std"] == pytest.approx(np.std(tests, ddof=1))
    assert set(result["electra_beats"]) == {"1.000e+00", "2.000e+07"}
    table = (tmp_path / "out" / "adaptation.md").read_text()
    assert "| unadapted start |" in table and "| bert_mlm |" in table
    assert (tmp_path / "out" / "adaptation.png").read_bytes()[:4] == b"\x89PNG"
    cell = json.loads((tmp_path / "out" / "electra" / "seed-1" / "cell.json").read_text())
    # Re-running skips every finished cell: no training, no probing, the same rows.
    lines.clear()
    again = adaptation_experiment(options, log=lines.append)
    assert not lines and again["rows"] == rows
    assert json.loads((tmp_path / "out" / "electra" / "seed-1" / "cell.json").read_text()) == cell
    # The second view: fine-tunings at the largest budget, added to a finished experiment.
    options = dataclasses.replace(
        options,
        finetune_seeds=finetune_seeds,
        finetune_overrides=("epochs=1", "max_train_examples=16", "max_seq_length=16"),
    )
    viewed = adaptation_experiment(options, log=lines.append)
    assert viewed["rows"] == rows and not any("seed 1: " in line for line in lines)
    assert [r["objective"] for r in viewed["finetuned"]] == [
        "unadapted start",
        "electra",
        "bert_mlm",
    ]
    for row in viewed["finetuned"]:
        tests = [run["test"] for run in row["runs"]]
        assert row["seeds"] == finetune_seeds
        assert row["test_mean"] == pytest.approx(np.mean(tests))
        assert all(0.0 <= t <= 1.0 for t in tests)
    step = next(r["steps"] for r in rows if r["objective"] == "electra" and r["budget"] == 2e7)
    last = finetune_seeds  # the last fine-tuned seed's run: its own seed and checkpoint
    electra_seed = json.loads(
        (
            tmp_path / "out" / "electra" / f"seed-{last}" / f"finetune-step-{step}" / "results.json"
        ).read_text()
    )
    assert electra_seed["config"]["seed"] == last and f"electra seed {last}" in electra_seed["init"]
    assert set(viewed["electra_beats_finetuned"]) == {"bert_mlm"}
    assert (
        "## Second view: fine-tuned at 2.00e+07 FLOPs"
        in (tmp_path / "out" / "adaptation.md").read_text()
    )
    lines.clear()
    assert adaptation_experiment(options, log=lines.append)["finetuned"] == viewed["finetuned"]
    assert not lines  # every fine-tuning was stored and is read back
    with pytest.raises(ConfigError, match="Unknown objective 'bert'"):
        adaptation_experiment(
            AdaptationOptions(
                data_dir=data, output_dir="x", start="y", objectives=("bert",), budgets=(1.0,)
            )
        )
