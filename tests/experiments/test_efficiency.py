"""The efficiency and generator-size experiments, end to end on a tiny corpus."""

import json

import numpy as np
import pytest
from helpers import SPECIAL, TINY_OVERRIDES, VOCAB, functions_run_eagerly, write_packed

from electra_tf.config import ConfigError
from electra_tf.data.tfrecords import Manifest
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.experiments.efficiency import (
    ExperimentOptions,
    _pretrain_config,
    budget_schedule,
    claim_holds,
    efficiency_experiment,
    generator_size_experiment,
    steps_for_budgets,
)

WORDS = [f"w{i}" for i in range(5, VOCAB)]


def _corpus(tmp_path):
    folder = tmp_path / "data"
    write_packed(folder, n=64, seq=16, manifest=False)
    (folder / "vocab.txt").write_text("\n".join([*SPECIAL_TOKENS, *WORDS]) + "\n")
    np.save(folder / "unigram_counts.npy", np.arange(VOCAB, dtype=np.int64))
    Manifest(
        folder=str(folder),
        sequence_length=16,
        shards=(("shard-000.tfrecord", 32), ("shard-001.tfrecord", 32)),
        vocab_file="vocab.txt",
        vocabulary_size=VOCAB,
        special_ids=dict(SPECIAL),
    ).write()
    rng = np.random.default_rng(0)
    rows = []
    for i in range(60):
        rating = float(rng.integers(-4, 5)) or 1.0
        words = " ".join(rng.choice(WORDS[:10] if rating > 0 else WORDS[10:20], size=4))
        rows.append(f"{i}_1\t{rating:.1f}\t{words}")
    movie = tmp_path / "movieReviewSnippets_GroundTruth.txt"
    movie.write_text("\n".join(rows) + "\n")
    return str(folder), str(movie)


def test_budget_schedule_runs_to_the_largest_budget_and_keeps_one_checkpoint_per_budget(
    tmp_path,
):
    data, movie = _corpus(tmp_path)
    options = ExperimentOptions(
        data_dir=data, output_dir=str(tmp_path), movie_file=movie, overrides=TINY_OVERRIDES
    )
    config = _pretrain_config(options, ("objective.name=electra",))
    per_step, _ = steps_for_budgets(config, [1.0])
    budgets = [2.5 * per_step, 4 * per_step, 0.1 * per_step]
    assert steps_for_budgets(config, budgets) == (per_step, [3, 4, 1])  # ceil, at least one
    scheduled, flops, steps = budget_schedule(config, budgets, warmup_fraction=0.5)
    assert (flops, steps) == (per_step, [3, 4, 1])
    train = scheduled.train
    assert (train.num_steps, train.warmup_steps, train.checkpoint_every) == (4, 2, 4)
    assert train.keep_checkpoints == 4  # every budget's step and the last


def test_claim_compares_medians_against_the_seed_spread():
    rows = [
        {"objective": "electra", "budget": 1.0, "median": 0.80, "std": 0.02},
        {"objective": "bert_mlm", "budget": 1.0, "median": 0.75, "std": 0.03},
        {"objective": "electra", "budget": 2.0, "median": 0.80, "std": 0.06},
        {"objective": "bert_mlm", "budget": 2.0, "median": 0.76, "std": 0.01},
    ]
    assert claim_holds(rows, 1.0) is True  # 0.05 > 0.03
    assert claim_holds(rows, 2.0) is False  # 0.04 < 0.06
    assert claim_holds(rows, 3.0) is None


@pytest.mark.slow
def test_efficiency_experiment_writes_table_plot_and_equal_budgets_over_two_seeds(tmp_path):
    """The full form of `test_efficiency_experiment_writes_table_plot_and_equal_budgets`:
    two fine-tuning seeds per checkpoint."""
    _check_the_efficiency_experiment(tmp_path, seeds=2)


@pytest.mark.slow
def test_efficiency_experiment_writes_table_plot_and_equal_budgets_at_two_budgets(tmp_path):
    """`test_efficiency_experiment_writes_table_plot_and_equal_budgets` at two budgets: each
    run checkpointed at both and each checkpoint fine-tuned (one seed)."""
    _check_the_efficiency_experiment(tmp_path, seeds=1)


@pytest.fixture(scope="module")
def one_budget(tmp_path_factory):
    """The experiment of `test_efficiency_experiment_writes_table_plot_and_equal_budgets`,
    run once, its steps run eagerly (the full forms trace theirs): (its folder, its corpus);
    its finished pre-training runs serve the probe test."""
    tmp_path = tmp_path_factory.mktemp("one-budget")
    data, movie = _corpus(tmp_path)
    with functions_run_eagerly():
        _check_the_efficiency_experiment(tmp_path, seeds=1, multiples=(3,), corpus=(data, movie))
    return tmp_path, (data, movie)


def test_efficiency_experiment_writes_table_plot_and_equal_budgets(one_budget):
    """Equal budgets, table, plot and claim at ONE budget (3 ELECTRA steps) with one
    fine-tuning seed: half the fine-tunings of `..._at_two_budgets` (which checkpoints each
    run at two budgets) and a quarter of `..._over_two_seeds`, the full form. (Run and
    checked in the `one_budget` fixture, whose pre-training the probe test reuses.)"""
    folder, _ = one_budget
    assert (folder / "out" / "efficiency.json").exists()


def _check_the_efficiency_experiment(tmp_path, seeds, multiples=(3, 6), corpus=None):
    data, movie = corpus or _corpus(tmp_path)
    options = ExperimentOptions(
        data_dir=data,
        output_dir=str(tmp_path / "out"),
        movie_file=movie,
        overrides=TINY_OVERRIDES,
        seeds=seeds,
        finetune_overrides=("epochs=1", "max_seq_length=16", "batch_size=8"),
    )
    per_step, _ = steps_for_budgets(_pretrain_config(options, ("objective.name=electra",)), [1.0])
    budgets = [m * per_step for m in multiples]  # ELECTRA: 3 (and 6) steps
    result = efficiency_experiment(options, ["electra", "bert_mlm"], budgets, log=lambda _: None)
    rows = result["rows"]
    electra = [("electra", m) for m in multiples]
    assert [(r["objective"], r["steps"]) for r in rows][: len(multiples)] == electra
    bert = [r for r in rows if r["objective"] == "bert_mlm"]
    # Equal compute: each run's FLOPs reach the budget within one of its own steps.
    for r in rows:
        per = r["train_flops"] / r["steps"]
        assert r["budget"] <= r["train_flops"] < r["budget"] + per
    assert bert[0]["steps"] != 3  # BERT's step costs differ, so its step count does too
    assert all(r["seeds"] == seeds and 0.0 <= r["median"] <= 1.0 for r in rows)
    out = tmp_path / "out"
    saved = json.loads((out / "efficiency.json").read_text())
    assert set(saved["claim_electra_beats_bert"]) == {f"{b:.3e}" for b in budgets}
    assert "| electra |" in (out / "efficiency.md").read_text()
    assert (out / "efficiency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_generator_size_experiment_and_bad_names(tmp_path, steps_run):
    """`[eager]` (default) runs the experiment's steps eagerly; `[traced]` (slow) is the full
    form, its steps traced."""
    data, movie = _corpus(tmp_path)
    options = ExperimentOptions(
        data_dir=data,
        output_dir=str(tmp_path / "sizes"),
        movie_file=movie,
        overrides=(
            *TINY_OVERRIDES,
            "model.hidden_dim=32",
            "model.num_heads=4",
            "model.intermediate_dim=64",
        ),
        seeds=1,
        finetune_overrides=("epochs=1", "max_seq_length=16", "batch_size=8"),
    )
    config = _pretrain_config(options, ("model.generator_size_fraction=1.0",))
    per_step, _ = steps_for_budgets(config, [1.0])
    result = generator_size_experiment(options, [0.25, 1.0], 3 * per_step, log=lambda _: None)
    small, full = result["rows"]
    assert small["generator_fraction"] == 0.25 and full["steps"] == 3
    assert small["steps"] > full["steps"]  # a smaller generator buys more steps at equal FLOPs
    assert (tmp_path / "sizes" / "generator_size.png").exists()
    with pytest.raises(ConfigError, match="Unknown objective 'bert'"):
        efficiency_experiment(options, ["bert"], [1e9])
    with pytest.raises(ConfigError, match="FLOP budget"):
        efficiency_experiment(options, ["electra"], [])


def test_claim_with_a_probe_spread_needs_a_margin_beyond_it():
    rows = [
        {"objective": "electra", "budget": 1.0, "median": 0.70, "std": 0.0},
        {"objective": "bert_mlm", "budget": 1.0, "median": 0.68, "std": 0.0},
    ]
    assert claim_holds(rows, 1.0) is True  # 0.02 > 0 with no spread given
    assert claim_holds(rows, 1.0, spread=0.01) is True
    assert claim_holds(rows, 1.0, spread=0.03) is False  # within random init's spread


def test_efficiency_measured_by_the_probe_beside_random_init(tmp_path, one_budget):
    """The probe measure on the pre-training runs of the `one_budget` experiment (same corpus,
    objectives and budget: copied, found finished, not trained again), its steps run eagerly;
    the full form, which pre-trains its own and traces its steps, is
    test_efficiency_measured_by_the_probe_beside_random_init_pretraining."""
    import shutil

    folder, (data, movie) = one_budget
    for name in ("electra", "bert_mlm"):
        shutil.copytree(folder / "out" / name / "pretrain", tmp_path / "probe" / name / "pretrain")
    with functions_run_eagerly():
        _check_the_probe_measure(tmp_path, data, movie)


@pytest.mark.slow
def test_efficiency_measured_by_the_probe_beside_random_init_pretraining(tmp_path):
    data, movie = _corpus(tmp_path)
    _check_the_probe_measure(tmp_path, data, movie)


def _check_the_probe_measure(tmp_path, data, movie):
    """The probe measure's rows, claim and table, with random init's probes beside them."""
    options = ExperimentOptions(
        data_dir=data,
        output_dir=str(tmp_path / "probe"),
        movie_file=movie,
        overrides=TINY_OVERRIDES,
        measure="probe",
        random_seeds=2,
    )
    per_step, _ = steps_for_budgets(_pretrain_config(options, ("objective.name=electra",)), [1.0])
    result = efficiency_experiment(options, ["electra", "bert_mlm"], [3 * per_step])
    rows = result["rows"]
    assert [r["objective"] for r in rows] == ["electra", "bert_mlm"]
    for r in rows:  # one probe per checkpoint: its dev accuracy, no seed spread
        assert r["seeds"] == 1 and r["std"] == 0.0
        assert r["median"] == r["min"] == r["max"] and 0.0 <= r["median"] <= 1.0
        assert 0.0 <= r["test"] <= 1.0
    random = result["random_init"]
    assert random["seeds"] == 2 and 0.0 <= random["mean"] <= 1.0 and random["std"] >= 0.0
    (claim,) = result["claim_electra_beats_bert"].values()
    margin = rows[0]["median"] - rows[1]["median"]
    assert claim == (margin > random["std"])
    table = (tmp_path / "probe" / "efficiency.md").read_text()
    assert "probe dev/accuracy" in table and "random initialisation" in table
    with pytest.raises(ConfigError, match="classification task"):
        ExperimentOptions(data_dir=data, output_dir="x", movie_file=movie, measure="probe",
                          task="movie_ratings")  # fmt: skip
    with pytest.raises(ConfigError, match="--measure must be"):
        ExperimentOptions(data_dir=data, output_dir="x", movie_file=movie, measure="fine")
