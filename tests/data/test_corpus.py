"""Corpus readers, sentence splitting and every kind of bad input."""

import bz2
import gzip
import json
import zlib

import numpy as np
import pytest

from electra_tf.data.chunks import classify
from electra_tf.data.corpus import (
    CorpusError,
    CorpusStats,
    JsonlSource,
    TextSource,
    TfdsSource,
    corpus_chunks,
    read_documents,
    sample_documents,
    split_sentences,
)
from electra_tf.data.documents import MAX_LINE_CHARS, PIECE_CHARS, chunk_documents


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


def test_bad_input_is_skipped_adjusted_and_counted(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "latin1.txt").write_bytes(b"Good line.\nCaf\xe9 au lait.\nAnother good line.\n")
    (tmp_path / "utf8.txt").write_bytes(b"Na\xc3\xafve line.\n\xc3\x28 broken line.\n")
    (tmp_path / "oneword.txt").write_text("Hello\n")
    (tmp_path / "huge.txt").write_bytes(b"x" * 2_000_000 + b"\nAfter the huge line.\n")
    (tmp_path / "binary.txt").write_bytes(b"\x7fELF\x02\x01\x00\x00" + bytes(range(256)) * 8)
    documents, stats = _read(TextSource([str(tmp_path)]))
    assert ["Hello"] in documents
    assert ["Good line.", "Café au lait.", "Another good line."] in documents  # not skipped
    assert ["Naïve line."] in documents  # a UTF-8 file: its one broken line is skipped
    # A 2 MB line is no sentence: split into sentences, then pieces of PIECE_CHARS.
    (huge,) = [d for d in documents if d[-1] == "After the huge line."]
    assert [len(piece) for piece in huge[:-1]] == [PIECE_CHARS] * (2_000_000 // PIECE_CHARS)
    assert stats.skipped == {"empty_files": 1, "lines_not_utf8": 1, "binary_files": 1}
    assert stats.adjusted == {"files_read_as_cp1252": 1, "long_lines_split": 1}
    assert stats.skipped_files == [str(tmp_path / "binary.txt")]
    assert any("latin1.txt is not UTF-8" in n for n in stats.notes)
    assert any("huge.txt has lines of over" in n for n in stats.notes)


def test_latin1_text_that_is_mostly_ascii_is_read_not_called_binary(tmp_path):
    text = "Élève à l'école, très tôt: où ça? Déjà vu, ça! " * 200  # 17% not ASCII
    (tmp_path / "french.txt").write_bytes(text.encode("latin-1") + b"\n")
    assert classify(text.encode("latin-1")) == "cp1252"  # before: "binary" (over 10% U+FFFD)
    assert classify(text.encode("utf-8")) == "utf-8"
    documents, stats = _read(TextSource([str(tmp_path)], layout="files"))
    assert " ".join(documents[0]) == text.strip() and stats.skipped_files == []


def test_a_long_line_in_the_lines_layout_is_split_into_its_sentences(tmp_path):
    sentences = [f"Sentence number {i} says something." for i in range(30_000)]  # 1 MB line
    (tmp_path / "one-line.txt").write_text(" ".join(sentences) + "\n\nNext document.\n")
    documents, stats = _read(TextSource([str(tmp_path)]))
    assert documents == [sentences, ["Next document."]]  # before: 1 sentence, one example
    assert stats.adjusted == {"long_lines_split": 1} and len(" ".join(sentences)) > MAX_LINE_CHARS


def test_a_truncated_archive_is_used_up_to_the_damage_and_named(tmp_path):
    lines = [f"Line {i} of the archive." for i in range(20_000)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(whole[: len(whole) // 2])
    (document,), stats = _read(TextSource([str(path)]))
    readable = zlib.decompressobj(wbits=31).decompress(path.read_bytes()).count(b"\n")
    assert 0 < readable < len(lines) and document == lines[:readable]  # every whole line
    assert stats.skipped_files == [] and stats.skipped == {}  # before: listed as skipped
    assert stats.adjusted == {"truncated_files": 1}
    assert f"{path} ends early" in stats.notes[0] and "bytes were used" in stats.notes[0]


def _by_hand(paths):
    """The "lines" layout read by hand: lines split at \\n, blank lines end documents."""
    documents = []
    for path in paths:
        document = []
        for line in path.read_text().split("\n"):
            if line.strip():
                document.append(line.strip())
            elif document:
                documents.append(document)
                document = []
        documents += [document] if document else []
    return documents


def test_chunks_cut_only_at_document_boundaries(tmp_path):
    rng = np.random.default_rng(3)
    for f in range(4):
        blocks = []
        for d in range(40):
            words = ["word"] * int(rng.integers(1, 6))
            lines = [f"Doc {f}.{d} line {k} " + " ".join(words) for k in range(rng.integers(1, 4))]
            blocks.append("\n".join(lines) + ("\n  \t" if d % 3 else "\n"))
        (tmp_path / f"part{f}.txt").write_text("\n".join(blocks) + "\n")
    paths = sorted(tmp_path.glob("*.txt"))
    source = TextSource([str(tmp_path)])
    for target in (1, 40, 300, 1000, 100_000):
        stats, documents = CorpusStats(), []
        chunks = list(corpus_chunks([source], target))
        for chunk in chunks:
            stats.merge(chunk.stats)
            documents += chunk_documents(chunk, stats)
        assert stats.input_bytes == sum(p.stat().st_size for p in paths)
        assert sum(documents, []) == sum(_by_hand(paths), [])  # every line, in order
        if target >= 300:  # longer than any document: cut only between documents
            assert documents == _by_hand(paths), target
            assert "documents_cut_at_chunks" not in stats.adjusted
            assert len(chunks) == 1 if target == 100_000 else len(chunks) > 1
        else:  # no blank line within twice the target: cut at a line end, and counted
            assert stats.adjusted["documents_cut_at_chunks"] > 0


def test_compressed_inputs_count_their_size_on_disk(tmp_path):
    with gzip.open(tmp_path / "a.txt.gz", "wt") as f:
        f.write("A sentence.\n" * 5000)
    with bz2.open(tmp_path / "b.txt.bz2", "wt") as f:
        f.write("Another.\n" * 5000)
    (tmp_path / "c.txt").write_bytes(b"\x00binary")
    sizes = sum(p.stat().st_size for p in tmp_path.iterdir())
    chunks = list(corpus_chunks([TextSource([str(tmp_path)])], 1000))
    assert sum(chunk.stats.input_bytes for chunk in chunks) == sizes
    assert sum(len(p[2]) for chunk in chunks for p in chunk.pieces) == 12 * 5000 + 9 * 5000


def test_the_vocabulary_sample_reads_its_budget_from_across_the_input(tmp_path):
    for f in range(50):
        lines = [f"File {f:02d} sentence {k:03d}." for k in range(400)]  # equal sizes
        (tmp_path / f"f{f:02d}.txt").write_text("\n\n".join(lines) + "\n")
    total = sum(p.stat().st_size for p in tmp_path.iterdir())
    stats = CorpusStats()
    documents = list(sample_documents([TextSource([str(tmp_path)])], stats, total // 10, 8))
    files = {int(d[0].split()[1]) for d in documents}
    starts = {f * 50 // 8 for f in range(8)}  # a window in each eighth of the input
    assert starts <= files <= starts | {f + 1 for f in starts}
    assert total // 12 < stats.characters < total // 8
    everything = list(sample_documents([TextSource([str(tmp_path)])], CorpusStats(), total))
    assert len(everything) == 50 * 400


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
