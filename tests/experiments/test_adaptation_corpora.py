"""The corpus x objective experiment's decision rule and its corpora."""

import math

import pytest

from electra_tf.experiments.adaptation_corpora import paired_verdict


def test_paired_verdict_by_hand():
    cell, base = [0.81, 0.80, 0.83, 0.82, 0.80], [0.80, 0.80, 0.81, 0.80, 0.79]
    d = [0.01, 0.0, 0.02, 0.02, 0.01]  # mean 0.012, sample std 0.008367
    result = paired_verdict(cell, base)
    assert result["mean"] == pytest.approx(sum(d) / 5)
    assert result["se"] == pytest.approx(0.0083666 / math.sqrt(5), rel=1e-4)
    assert result["verdict"] == "helps"  # 0.012 > 2 x 0.00374
    assert paired_verdict(base, cell)["verdict"] == "hurts"
    # The same mean with a wider spread is not resolved; unpaired noise is not credited.
    assert paired_verdict([0.85, 0.76, 0.83, 0.86, 0.76], base)["verdict"] == "not resolved"


def test_the_task_corpus_holds_training_texts_only(tmp_path):
    from electra_tf.datasets.adaptation_text import _documents

    rows = [f"{i}\t{(-1) ** i * 2.0}\tsnippet number {i} of the movie file" for i in range(50)]
    movie = tmp_path / "movies.txt"
    movie.write_text("\n".join(rows) + "\n")
    tweets = tmp_path / "tweets.txt"
    tweets.write_text("1\t1.0\tA tweet.\n2\t-1.0\tAnother tweet.\n")
    snippets = {"movie_reviews": movie, "tweets": tweets}
    from electra_tf.datasets.readers import movie_review_split, read_movie_reviews
    from electra_tf.datasets.tasks import get_task

    splits = movie_review_split(read_movie_reviews(movie), get_task("movie_reviews"))
    held = {e.text_a for e in splits["dev"] + splits["test"]}
    task = _documents("task", snippets, "movie_reviews")
    (texts,) = task.values()
    assert sorted(texts) == sorted(e.text_a for e in splits["train"]) and not held & set(texts)
    assert _documents("domain", snippets, "movie_reviews") == {
        "tweets": ["A tweet.", "Another tweet."]
    }
    both = _documents("both", snippets, "movie_reviews")
    assert list(both) == ["tweets", "movie_reviews (training texts)"]


def _bert_folder(folder, words):
    import torch
    import transformers as hf

    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

    config = hf.BertConfig(
        vocab_size=len(SPECIAL_TOKENS) + len(words), hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    hf.BertModel(config).eval().save_pretrained(str(folder))
    write_vocabulary(list(SPECIAL_TOKENS) + words, folder / "vocab.txt")
    return folder


@pytest.mark.slow
def test_the_experiment_runs_pairs_over_two_seeds_and_resumes(tmp_path):
    """The full form of `test_the_experiment_runs_pairs_and_resumes`: two fine-tuning seeds
    per encoder, paired seed by seed."""
    _check_the_corpora_experiment(tmp_path, finetune_seeds=2)


def test_the_experiment_runs_pairs_and_resumes(tmp_path):
    """Cells, pairs against the unadapted start and resumption with ONE fine-tuning seed
    per encoder (half the fine-tunings); the full form is `..._pairs_over_two_seeds_...`."""
    _check_the_corpora_experiment(tmp_path, finetune_seeds=1)


def _check_the_corpora_experiment(tmp_path, finetune_seeds):
    import json

    import numpy as np

    from electra_tf.data.public import SNIPPET_FILES
    from electra_tf.experiments.adaptation_corpora import CorporaOptions, corpora_experiment

    words = ["good", "bad", "film", "the", "was", "tweet", "food", "very"]
    rng = np.random.default_rng(0)
    corpora = tmp_path / "cache" / "corpora"
    corpora.mkdir(parents=True)
    for name, file in SNIPPET_FILES.items():
        rows = []
        for i in range(120 if name == "movie_reviews" else 40):
            rating = float(rng.choice([-2.0, 2.0]))
            text = " ".join(rng.choice(words[2:], 4)) + (" good" if rating > 0 else " bad")
            rows.append(f"{i}\t{rating}\t{text}")
        (corpora / file).write_text("\n".join(rows) + "\n")
    start = _bert_folder(tmp_path / "bert", words)
    options = CorporaOptions(
        output_dir=str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"), start=str(start),
        corpora=("domain", "task"), objectives=("electra",), steps=2, batch_size=4,
        sequence_length=16, finetune_seeds=finetune_seeds, finetune_train_examples=40,
        finetune_overrides=("epochs=1", "max_seq_length=16"),
    )  # fmt: skip
    result = corpora_experiment(options, log=lambda line: None)
    assert [c["name"] for c in result["cells"]] == ["domain-electra-x1", "task-electra-x1"]
    assert result["train_examples"] == 40
    base = result["unadapted"]
    for cell in result["cells"]:
        assert cell["steps"] == {"paper": 2, "sparse": 2}
        differences = np.subtract(cell["test"], base["test"])
        assert cell["paired_test"]["mean"] == pytest.approx(differences.mean())
        assert len(cell["dev"]) == finetune_seeds and 0.0 <= cell["held_out"]["disc_auc"] <= 1.0
    assert result["best_electra_on_dev"] in ("domain-electra-x1", "task-electra-x1")
    split = json.loads((tmp_path / "cache" / "corpora" / "adapt-task-split.json").read_text())
    (report,) = split.values()
    assert report["held_out"] + report["train"] + report["near_duplicates"] == 96  # train split
    # A second call finds every cell finished: nothing is trained or fine-tuned again.
    stamp = (tmp_path / "out" / "task-electra-x1" / "cell.json").stat().st_mtime_ns
    again = corpora_experiment(options, log=lambda line: pytest.fail(line))
    assert again["cells"] == result["cells"]
    assert (tmp_path / "out" / "task-electra-x1" / "cell.json").stat().st_mtime_ns == stamp
    assert (tmp_path / "out" / "adaptation-corpora.png").stat().st_size > 0


def test_a_recipe_edited_while_the_experiment_runs_does_not_reach_later_cells(tmp_path):
    from pathlib import Path

    from electra_tf.config import load_recipe
    from electra_tf.experiments.adaptation_corpora import _frozen_recipe

    source = Path(__file__).resolve().parents[2] / "recipes" / "pretrain" / "adapt.toml"
    recipe = tmp_path / "mine.toml"
    text = source.read_text()
    recipe.write_text(text.replace("learning_rate = 1e-4", "learning_rate = 2e-4"))
    assert _frozen_recipe(str(recipe)).train.learning_rate == 2e-4
    recipe.write_text(text.replace("learning_rate = 1e-4", "learning_rate = 7e-4"))
    assert load_recipe(str(recipe)).train.learning_rate == 7e-4  # the file changed
    assert _frozen_recipe(str(recipe)).train.learning_rate == 2e-4  # the run did not
