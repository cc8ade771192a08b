"""Held-out pre-training text: whole documents, no near-duplicates, every corpus in proportion."""

import pytest

from electra_tf.config import ConfigError
from electra_tf.data.held_out import fold, split_documents, write_files_corpus, write_lines_corpus


def test_fold_makes_case_punctuation_and_whitespace_variants_equal():
    assert fold("Great film!!") == fold("great   film") == "great film"
    assert fold("Ｆｉｌｍ") == "film"  # NFKC: full-width letters
    assert fold("great film") != fold("great films")


def test_no_document_is_on_both_sides_and_each_corpus_is_held_out_in_proportion():
    corpora = {
        "tweets": [f"tweet number {i}" for i in range(200)] + ["Tweet number 3!"],
        "editorials": [f"editorial {i}\nsecond sentence" for i in range(40)],
    }
    split = split_documents(corpora, 0.1, seed=3)
    train = {text for _, text in split.train}
    held = {text for _, text in split.held_out}
    assert not train & held
    assert split.report["tweets"] == {
        "documents": 201, "near_duplicates": 1, "held_out": 20, "train": 180,
    }  # fmt: skip
    assert split.report["editorials"]["held_out"] == 4  # 10% of each corpus, not of the total
    assert {name for name, _ in split.held_out} == {"tweets", "editorials"}
    again = split_documents(corpora, 0.1, seed=3)
    assert again.held_out == split.held_out  # seeded
    assert split_documents(corpora, 0.1, seed=4).held_out != split.held_out


def test_near_duplicates_across_corpora_are_dropped_once():
    split = split_documents({"a": ["Same text."], "b": ["same text", "other"]}, 0.0)
    assert [text for _, text in split.train] == ["Same text.", "other"]
    assert split.report["b"]["near_duplicates"] == 1


def test_a_split_with_an_empty_side_is_refused_in_one_sentence():
    with pytest.raises(ConfigError, match="leaves nothing held out"):
        split_documents({"one": ["a single document"]}, 0.05)
    with pytest.raises(ConfigError, match="leaves nothing to train on"):
        split_documents({"one": ["a", "b"]}, 0.9)
    with pytest.raises(ConfigError, match="below 1"):
        split_documents({"one": ["a", "b"]}, 1.0)


def test_writers_lay_out_documents_for_prepare(tmp_path):
    path = write_lines_corpus([("c", "one.\ntwo."), ("c", "three.")], tmp_path / "x.txt")
    assert path.read_text() == "one.\ntwo.\n\nthree.\n"
    folder = write_files_corpus([("bbc", ("sport/1.txt", "Goal."))], tmp_path / "files")
    assert (folder / "bbc" / "sport" / "1.txt").read_text() == "Goal."
    assert not (tmp_path / "files.tmp").exists()
