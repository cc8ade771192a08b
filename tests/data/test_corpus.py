"""Corpus readers, sentence splitting and every kind of bad input."""

import bz2
import gzip
import json

import pytest

from electra_tf.data.corpus import (
    MAX_LINE_BYTES,
    CorpusError,
    CorpusStats,
    JsonlSource,
    TextSource,
    TfdsSource,
    read_documents,
    split_sentences,
)


def _read(source, **kwargs):
    stats = CorpusStats()
    return list(read_documents([source], stats, **kwargs)), stats


def test_sentence_splitting():
    text = (
        "Dr. Who met Mr. J. Smith in the U.S. on Monday. It rained! Did it? "
        '"Yes," he said. Prices rose 3.5 percent. 2020 was odd.\nA new paragraph'
    )
    assert split_sentences(text) == [
        "Dr. Who met Mr. J. Smith in the U.S. on Monday.",
        "It rained!",
        "Did it?",
        '"Yes," he said.',
        "Prices rose 3.5 percent.",
        "2020 was odd.",
        "A new paragraph",
    ]
    assert split_sentences("  ") == [] and split_sentences("no end") == ["no end"]


def test_lines_layout_blank_lines_and_files_end_documents(tmp_path):
    (tmp_path / "a.txt").write_text("First sentence.\nSecond one.\n\nNew document.\n")
    (tmp_path / "b.txt").write_text("Other file.\n")
    documents, stats = _read(TextSource([str(tmp_path)]))
    assert documents == [["First sentence.", "Second one."], ["New document."], ["Other file."]]
    assert (stats.files, stats.documents, stats.sentences) == (2, 3, 4)


def test_files_layout_compression_and_jsonl(tmp_path):
    with gzip.open(tmp_path / "doc1.txt.gz", "wt") as f:
        f.write("One doc. Two sentences.\n\nA paragraph.")
    with bz2.open(tmp_path / "doc2.bz2", "wt") as f:
        f.write("Compressed too.")
    documents, _ = _read(TextSource([str(tmp_path)], layout="files"))
    assert documents == [["One doc.", "Two sentences.", "A paragraph."], ["Compressed too."]]
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(
        "\n".join(
            [
                json.dumps({"body": "Hello there. General Kenobi."}),
                "{broken json",
                json.dumps({"title": "no body"}),
                json.dumps({"body": "Last."}),
            ]
        )
    )
    documents, stats = _read(JsonlSource([str(jsonl)], field="body"))
    assert documents == [["Hello there.", "General Kenobi."], ["Last."]]
    assert stats.skipped == {"lines_not_json": 1, "records_without_body": 1}


def test_bad_input_is_skipped_and_counted(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "latin1.txt").write_bytes(b"Good line.\nCaf\xe9 au lait.\nAnother good line.\n")
    (tmp_path / "oneword.txt").write_text("Hello\n")
    (tmp_path / "huge.txt").write_bytes(b"x" * 10_000_000 + b"\nAfter the huge line.\n")
    (tmp_path / "binary.txt").write_bytes(b"\x7fELF\x02\x01\x00\x00" + bytes(range(256)) * 8)
    documents, stats = _read(TextSource([str(tmp_path)]))
    assert ["Hello"] in documents
    assert ["Good line.", "Another good line."] in documents
    # A 10 MB line is read in pieces of at most MAX_LINE_BYTES, never whole.
    (huge,) = [d for d in documents if d[-1] == "After the huge line."]
    assert [len(piece) for piece in huge[:-1]] == [MAX_LINE_BYTES] * 10
    assert stats.skipped == {
        "empty_files": 1,
        "lines_not_utf8": 1,
        "long_lines_split": 9,  # cut nine times into ten pieces
        "binary_files": 1,
    }
    assert stats.skipped_files == [str(tmp_path / "binary.txt")]


def test_unusable_inputs_fail_up_front_with_one_sentence(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        TextSource([str(tmp_path / "missing")])
    (tmp_path / "pictures").mkdir()
    (tmp_path / "pictures" / "cat.png").write_bytes(b"\x89PNG")
    with pytest.raises(CorpusError, match="holds no text files"):
        TextSource([str(tmp_path / "pictures")])
    with pytest.raises(CorpusError, match="Unknown text layout"):
        TextSource([str(tmp_path)], layout="pages")
    with pytest.raises(CorpusError, match="TFDS dataset 'no_such_corpus_v9' cannot be loaded"):
        TfdsSource("no_such_corpus_v9")


def test_tfds_source_reads_a_locally_built_dataset(tmp_path):
    import tfds_fixture.local_corpus  # noqa: F401 - registers the builder "local_corpus"

    source = TfdsSource("local_corpus", split="train", feature="text", data_dir=str(tmp_path))
    documents, stats = _read(source)  # builds the dataset on first use, offline
    assert sorted(documents) == [["First article.", "It has two sentences."], ["Second article!"]]
    assert stats.skipped == {"empty_records": 1}
    prepared = next(tmp_path.glob("local_corpus/1.0.0"))
    from_folder, _ = _read(TfdsSource(str(prepared), feature="text"))
    assert sorted(from_folder) == sorted(documents)
    with pytest.raises(CorpusError, match="has no feature 'body'"):
        TfdsSource("local_corpus", feature="body", data_dir=str(tmp_path))
    with pytest.raises(CorpusError, match="has no split 'validation'"):
        TfdsSource("local_corpus", split="validation", data_dir=str(tmp_path))


def test_max_documents(tmp_path):
    (tmp_path / "a.txt").write_text("One.\n\nTwo.\n\nThree.\n")
    documents, stats = _read(TextSource([str(tmp_path)]), max_documents=2)
    assert documents == [["One."], ["Two."]] and stats.documents == 2
