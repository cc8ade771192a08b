"""Your own labelled files: layouts, kinds, label order, and one sentence for each bad input."""

import json

import pytest

from electra_tf.config import ConfigError
from electra_tf.datasets.conll import read_conll
from electra_tf.datasets.files import Columns, read_table
from electra_tf.finetuning.user_task import user_task
from electra_tf.tasks.kind import infer_kind
from electra_tf.tasks.registry import get_kind


def _kind_and_labels(rows, kind=None, labels=None):
    name, how = infer_kind(rows, kind)
    names, order = get_kind(name).label_names(rows, labels)
    return name, names, f"{how}; {order}"


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def test_csv_tsv_and_jsonl_give_the_same_examples(tmp_path):
    rows = [("Great food, slow service", "pos"), ('A "so-so" place', "neg")]
    csv_text = "body,verdict\n" + "".join(
        f'"{t.replace(chr(34), 2 * chr(34))}",{v}\n' for t, v in rows
    )
    tsv_text = "verdict\tbody\n" + "".join(f"{v}\t{t}\n" for t, v in rows)
    jsonl = "".join(json.dumps({"body": t, "verdict": v}) + "\n" for t, v in rows)
    columns = Columns(text="body", label="verdict")
    read = [
        read_table(_write(tmp_path / name, text), columns)[0]
        for name, text in (("a.csv", "\ufeff" + csv_text), ("a.tsv", tsv_text), ("a.jsonl", jsonl))
    ]
    for examples in read:
        assert [(e.text_a, e.label) for e in examples] == rows
    assert read[0][1].guid == "a.csv:3"  # row numbers count the header line


def test_unusable_rows_are_skipped_and_counted_with_their_row_numbers(tmp_path):
    text = "text,label\nfine,pos\n,neg\nok,\nshort\n\ngood,pos\n"
    examples, report = read_table(_write(tmp_path / "t.csv", text), Columns())
    assert [e.text_a for e in examples] == ["fine", "good"]
    # Row 6, a blank line inside the table, is an empty row too (issue 56: said, not dropped).
    assert report.skipped_rows == {"empty_text": [3, 6], "empty_label": [4], "malformed_rows": [5]}
    lines = '{"text": "a", "label": "x"}\nnot json\n[1, 2]\n{"label": "y"}\n'
    examples, report = read_table(_write(tmp_path / "t.jsonl", lines), Columns())
    assert len(examples) == 1
    assert report.skipped_rows == {"malformed_rows": [2, 3], "missing_fields": [4]}


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("a.csv", "body,label\nx,1\n", r"a.csv has no column 'text' \(its columns: body, label\)"),
        ("a.csv", "", r"a.csv is empty"),
        ("a.csv", "text,label\n", r"a.csv holds no usable rows"),
        ("a.csv", '{"text": "x", "label": 1}\n', r"looks like JSON Lines.*--format jsonl"),
        ("a.jsonl", "text,label\nx,1\n", r"line 1 is not a JSON object.*--format csv"),
        ("a.csv", "text\tlabel\nx\t1\n", r"looks tab-separated"),
        ("a.txt", "text,label\nx,1\n", r"cannot tell its format.*--format"),
        ("a.csv", b"text,label\ncaf\xe9,1\n", r"line 2: byte 0xe9 .* not UTF-8"),
        ("a.csv", "text,verdict\nx,1\n", r"has no column 'label'"),
    ],
)
def test_bad_files_fail_with_one_sentence_naming_the_file(tmp_path, name, content, message):
    with pytest.raises(ConfigError, match=message):
        read_table(_write(tmp_path / name, content), Columns())


def test_kinds_and_label_order_are_inferred_and_stated(tmp_path):
    def table(values):
        lines = ["text,label"] + [f"t{i},{v}" for i, v in enumerate(values)]
        return read_table(_write(tmp_path / "k.csv", "\n".join(lines) + "\n"), Columns())[0]

    infer = _kind_and_labels
    assert infer(table(["pos", "neg", "pos"]))[:2] == ("classification", ["neg", "pos"])
    assert infer(table(["10", "2", "1"]))[:2] == ("classification", ["1", "2", "10"])
    kind, labels, how = infer(table(["0.5", "3", "1.25"]))
    assert (kind, labels) == ("regression", []) and "not integers" in how
    assert infer(table(["1", "2"]), kind="regression")[0] == "regression"
    assert infer(table(["a", "b"]), labels=["b", "a"])[1] == ["b", "a"]
    with pytest.raises(ConfigError, match="'c', which --labels does not list"):
        infer(table(["a", "c"]), labels=["a", "b"])
    with pytest.raises(ConfigError, match="Unknown kind 'span': choose one of .*question_answ"):
        infer(table(["a"]), kind="span")  # SQuAD's old kind: question_answering is the one
    lines = [
        json.dumps({"text": "x", "label": ["sport", "news"]}),
        json.dumps({"text": "y", "label": []}),
    ]
    multi, report = read_table(_write(tmp_path / "m.jsonl", "\n".join(lines)), Columns())
    assert _kind_and_labels(multi)[:2] == ("multi_label", ["news", "sport"])
    assert report.skipped_rows == {"empty_label": [2]}
    delimited = read_table(
        _write(tmp_path / "m.csv", 'text,label\nx,"news|sport"\n'), Columns(label_delimiter="|")
    )[0]
    assert delimited[0].label == ["news", "sport"]


def test_a_dev_label_unknown_to_training_is_refused(tmp_path):
    train = _write(tmp_path / "train.csv", "text,label\na,pos\nb,neg\n")
    dev = _write(tmp_path / "dev.csv", "text,label\nc,pos\nd,maybe\n")
    with pytest.raises(ConfigError, match=r"dev.csv:3 \(dev\): label 'maybe' never occurs"):
        user_task(train, dev)
    test = _write(tmp_path / "test.csv", "text\nunlabelled text\n")
    dev = _write(tmp_path / "dev.csv", "text,label\nc,pos\n")
    task, splits, reports, how = user_task(train, dev, test)
    assert task.labels == ("neg", "pos") and splits["test"][0].label is None
    get_kind("classification").check_labels("dev", splits["dev"], ["neg", "pos"])


def test_whole_number_labels_are_names_in_json_lines_and_csv_alike(tmp_path):
    # Defect 3: JSON numbers were class ids (ratings 1..3 failed; --labels 1,0 swapped 0/1).
    def jsonl(name, rows):
        text = "".join(json.dumps({"text": t, "stars": v}) + "\n" for t, v in rows)
        return _write(tmp_path / name, text)

    columns = Columns(label="stars")
    train = jsonl("train.jsonl", [("bad", 1), ("fine", 2), ("great", 3), ("ok", 2)])
    dev = jsonl("dev.jsonl", [("meh", 2), ("superb", 3)])
    task, splits, _, how = user_task(train, dev, columns=columns)
    assert task.kind == "classification" and task.labels == ("1", "2", "3")
    assert [e.label for e in splits["train"]] == ["1", "2", "3", "2"]
    spec = get_kind("classification")
    assert spec.encode_targets(task.labels, [e.label for e in splits["dev"]]).tolist() == [1, 2]
    # --labels 1,0 names the order: "1" is class 0 whether the file wrote 1 or "1".
    binary = jsonl("b.jsonl", [("yes", 1), ("no", 0)])
    csv_file = _write(tmp_path / "b.csv", "text,stars\nyes,1\nno,0\n")
    for path in (binary, csv_file):
        task, splits, _, how = user_task(path, path, columns=columns, labels=["1", "0"])
        targets = spec.encode_targets(task.labels, [e.label for e in splits["train"]])
        assert task.labels == ("1", "0") and targets.tolist() == [0, 1], path
        assert how.endswith("label order given")


def test_conll_files_give_sentences_of_words_and_tags(tmp_path):
    text = "-DOCSTART- -X- O\n\nAda NNP B-PER\nLovelace NNP I-PER\nwrote O\n\nRome B-LOC\nbroken\n"
    sentences, report = read_conll(_write(tmp_path / "t.conll", text))
    assert [s.words for s in sentences] == [("Ada", "Lovelace", "wrote"), ("Rome",)]
    assert sentences[0].label == ("B-PER", "I-PER", "O") and sentences[1].guid == "t.conll:7"
    assert report.skipped_rows == {"malformed_rows": [8]}
    untagged, _ = read_conll(_write(tmp_path / "u.conll", "Ada\nwrote\n"), needs_labels=False)
    assert untagged[0].words == ("Ada", "wrote") and untagged[0].label is None
    with pytest.raises(ConfigError, match="has no tag column"):
        read_conll(tmp_path / "u.conll")
