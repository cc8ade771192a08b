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
    from electra_tf.finetuning.adaptation_text import _documents

    rows = [f"{i}\t{(-1) ** i * 2.0}\tsnippet number {i} of the movie file" for i in range(50)]
    movie = tmp_path / "movies.txt"
    movie.write_text("\n".join(rows) + "\n")
    tweets = tmp_path / "tweets.txt"
    tweets.write_text("1\t1.0\tA tweet.\n2\t-1.0\tAnother tweet.\n")
    snippets = {"movie_reviews": movie, "tweets": tweets}
    from electra_tf.finetuning.readers import movie_review_split, read_movie_reviews
    from electra_tf.finetuning.tasks import get_task

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
