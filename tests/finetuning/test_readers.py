"""Fine-tuning readers on files in the official formats, and the fixed movie-review split."""

import numpy as np
import pytest
from helpers import write_lines

from electra_tf.config import ConfigError
from electra_tf.datasets.readers import (
    MOVIE_REVIEW_SEED,
    ReadReport,
    movie_review_split,
    read_glue_tsv,
    read_movie_reviews,
)
from electra_tf.datasets.tasks import TASKS, get_task


def test_glue_readers_in_the_official_layouts(tmp_path):
    cola = write_lines(
        tmp_path / "cola.tsv",
        ["gj04\t1\t\tThe book was read.", "gj04\t0\t*\tRead book the was.", "short\trow"],
    )
    report = ReadReport()
    examples = read_glue_tsv(TASKS["cola"], cola, report)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == [
        ("The book was read.", None, 1),
        ("Read book the was.", None, 0),
    ]
    assert report.skipped == {"rows_with_missing_columns": 1}
    mrpc = write_lines(
        tmp_path / "mrpc.tsv",
        [
            "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String",
            "1\t1\t2\tHe said hi.\tHe greeted us.",
            "0\t3\t4\tA cat.\t",
        ],
    )
    report = ReadReport()
    examples = read_glue_tsv(TASKS["mrpc"], mrpc, report)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == [
        ("He said hi.", "He greeted us.", 1)
    ]
    assert report.skipped == {"empty_text": 1}
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    )
    stsb = write_lines(
        tmp_path / "stsb.tsv",
        [header, "0\tmain\tx\t2012\t1\ta\tb\tA man plays.\tA man is playing.\t4.75"],
    )
    assert read_glue_tsv(TASKS["stsb"], stsb)[0].label == 4.75
    mnli_header = (
        "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
        "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label"
    )
    mnli = write_lines(
        tmp_path / "dev_matched.tsv",
        [
            mnli_header,
            "0\t1\t1a\tfiction\t(x)\t(y)\t(X)\t(Y)\tIt rains.\tIt is wet.\tentailment\tentailment",
        ],
    )
    assert read_glue_tsv(TASKS["mnli"], mnli)[0].label == TASKS["mnli"].labels.index("entailment")
    rte = write_lines(
        tmp_path / "rte.tsv",
        [
            "index\tsentence1\tsentence2\tlabel",
            "0\tA dog barks.\tAn animal makes noise.\tentailment",
            "1\tX.\tY.\tmaybe",
        ],
    )
    with pytest.raises(ConfigError, match=r"rte.tsv, line 3: label 'maybe' is not one of rte's"):
        read_glue_tsv(TASKS["rte"], rte)
    wrong = write_lines(
        tmp_path / "qnli.tsv", ["index\tquestion\tanswer\tlabel", "0\tq\ta\tentailment"]
    )
    with pytest.raises(ConfigError, match="line 1: the header has no 'sentence' column"):
        read_glue_tsv(TASKS["qnli"], wrong)
    with pytest.raises(ConfigError, match="does not exist"):
        read_glue_tsv(TASKS["sst2"], tmp_path / "missing.tsv")
    assert get_task("SST-2") is TASKS["sst2"] and get_task("sts-b") is TASKS["stsb"]


def test_movie_review_split_is_fixed_and_documented(tmp_path):
    rows = [f"{i}_1\t{(i % 9) - 4:.1f}\tSnippet number {i}." for i in range(100)]
    path = write_lines(tmp_path / "movieReviewSnippets_GroundTruth.txt", rows + ["bad row"])
    report = ReadReport()
    data = read_movie_reviews(path, report)
    assert len(data) == 100 and report.skipped == {"rows_with_missing_columns": 1}
    binary = movie_review_split(data, TASKS["movie_reviews"])
    regression = movie_review_split(data, TASKS["movie_ratings"])
    assert [len(regression[s]) for s in ("train", "dev", "test")] == [80, 10, 10]
    zeros = sum(1 for i in range(100) if (i % 9) - 4 == 0)
    assert sum(len(v) for v in binary.values()) == 100 - zeros
    order = np.random.default_rng(MOVIE_REVIEW_SEED).permutation(100)
    assert {e.guid for e in regression["dev"]} == {f"dev-{i}" for i in order[80:90]}
    assert all(
        e.label == int(float(rows[int(e.guid.split("-")[1])].split("\t")[1]) > 0)
        for e in binary["train"]
    )


def test_a_byte_that_is_not_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_bytes(b"sentence\tlabel\ngood\t1\ncaf\xe9 au lait\t0\n")
    with pytest.raises(ConfigError, match=r"train.tsv, line 3: byte 0xe9 at column 4 is not UTF-8"):
        read_glue_tsv(TASKS["sst2"], path)
