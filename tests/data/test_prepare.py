"""prepare: corpus -> vocabulary + shards + manifest, deterministic, and pretrain-ready."""

import gzip
import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.corpus import CorpusError, TextSource
from electra_tf.data.prepare import prepare_corpus
from electra_tf.data.tfrecords import Manifest, parse_batch, resolve_files

SENTENCES = [
    "The river flows past the old mill.",
    "Children play near the water.",
    "A heron waits on the bank.",
    "Clouds gather over the hills.",
    "Rain falls on the roofs.",
    "The baker opens his shop early.",
    "Fresh bread smells wonderful.",
    "People queue outside.",
]


def _corpus(folder, documents=30):
    folder.mkdir(parents=True, exist_ok=True)
    for d in range(documents):
        lines = [SENTENCES[(d + k) % len(SENTENCES)] for k in range(2 + d % 5)]
        (folder / f"doc{d:03d}.txt").write_text("\n".join(lines) + "\n")
    return folder


def _digest(folder):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.glob("pretrain-*.tfrecord"))
    }


def test_prepare_writes_shards_vocab_and_manifest_and_reruns_identically(tmp_path):
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data"
    result = prepare_corpus(
        [TextSource([str(corpus)], layout="files")],
        out,
        vocabulary_size=80,
        sequence_length=24,
        examples_per_shard=7,
        progress=False,
    )
    manifest = Manifest.read(out)
    assert manifest.sequence_length == 24 and manifest.num_examples == result.examples > 7
    assert [count for _, count in manifest.shards][:-1] == [7] * (len(manifest.shards) - 1)
    assert manifest.special_ids == {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}
    assert (out / "vocab.txt").read_text().split("\n")[:5] == [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
    ]
    assert not list(out.glob("*.tmp"))
    unigram = np.load(out / "unigram_counts.npy")
    assert unigram.sum() == result.tokens and unigram[2] == result.examples  # one [CLS] each
    files, counts, _ = resolve_files(str(out))
    batch = parse_batch(next(iter(tf.data.TFRecordDataset(files).batch(100))), 24)
    ids, mask = batch["token_ids"].numpy(), batch["padding_mask"].numpy()
    assert (ids[:, 0] == 2).all() and (ids[mask == 0] == 0).all()
    assert (ids[mask == 1] != 1).all()  # every word of this corpus is in the learned vocabulary
    first = _digest(out)
    prepare_corpus(
        [TextSource([str(corpus)], layout="files")],
        out,
        vocabulary_size=80,
        sequence_length=24,
        examples_per_shard=7,
        progress=False,
    )
    assert _digest(out) == first
    report = json.loads((out / "prepare_report.json").read_text())
    assert report["corpus"]["documents"] == 30


def test_repeated_documents_are_packed_once_and_counted(tmp_path):
    corpus = _corpus(tmp_path / "corpus", documents=6)
    files = sorted(corpus.iterdir())
    (corpus / "copy-a.txt").write_text(files[0].read_text())  # two exact repeats
    (corpus / "copy-b.txt").write_text(files[1].read_text())
    counts = {}
    for deduplicate in (True, False):
        out = tmp_path / f"data-{deduplicate}"
        result = prepare_corpus(
            [TextSource([str(corpus)], layout="files")],
            out,
            vocabulary_size=80,
            sequence_length=24,
            progress=False,
            deduplicate=deduplicate,
        )
        report = json.loads((out / "prepare_report.json").read_text())
        counts[deduplicate] = (result.tokens, report["corpus"]["skipped"])
    assert counts[True][1] == {"duplicate_documents": 2} and counts[False][1] == {}
    assert counts[True][0] < counts[False][0]


def test_given_vocabulary_and_a_corpus_with_no_usable_text(tmp_path):
    corpus = _corpus(tmp_path / "corpus", documents=4)
    first = tmp_path / "first"
    prepare_corpus(
        [TextSource([str(corpus)])], first, vocabulary_size=60, sequence_length=16, progress=False
    )
    again = tmp_path / "again"
    prepare_corpus(
        [TextSource([str(corpus)])],
        again,
        vocab_file=first / "vocab.txt",
        sequence_length=16,
        progress=False,
    )
    assert (again / "vocab.txt").read_text() == (first / "vocab.txt").read_text()
    assert _digest(again) == _digest(first)
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "a.txt").write_bytes(b"\xff\xfe\xfa\n")
    (tmp_path / "blank" / "b.txt").write_bytes(b"")
    with pytest.raises(CorpusError, match="No usable text"):
        prepare_corpus(
            [TextSource([str(tmp_path / "blank")])],
            tmp_path / "x",
            vocab_file=first / "vocab.txt",
            progress=False,
        )
    assert not (tmp_path / "x" / "manifest.json").exists()


def test_prepare_cli_reports_skips_and_errors(tmp_path, capsys):
    """`electra-tf prepare` through `main` in this process; the full form, a fresh
    process, is `test_prepare_cli_in_a_fresh_process_reports_skips_and_errors`."""
    from electra_tf.cli import main

    corpus = _corpus(tmp_path / "corpus", documents=6)
    (corpus / "broken.txt").write_bytes(b"ok caf\xc3\xa9.\n\xc3\x28 bad utf8\n")  # UTF-8
    out = tmp_path / "data"
    capsys.readouterr()
    args = ["--output-dir", str(out), "--vocab-size", "60", "--sequence-length", "16", "--quiet"]
    assert main(["prepare", "--input", str(corpus), *args]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["corpus"]["skipped"] == {"lines_not_utf8": 1} and summary["examples"] > 0
    # A missing input: one sentence and exit 2.
    code = main(["prepare", "--input", str(tmp_path / "nowhere"), "--output-dir", str(out)])
    said = capsys.readouterr().err
    assert code == 2 and "does not exist" in said and len(said.strip().splitlines()) == 1
    assert said.startswith("electra-tf prepare: ") and "Traceback" not in said


@pytest.mark.slow
def test_prepare_cli_in_a_fresh_process_reports_skips_and_errors(tmp_path, capsys):
    corpus = _corpus(tmp_path / "corpus", documents=6)
    (corpus / "broken.txt").write_bytes(b"ok caf\xc3\xa9.\n\xc3\x28 bad utf8\n")  # UTF-8
    out = tmp_path / "data"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "electra_tf.cli",
            "prepare",
            "--input",
            str(corpus),
            "--output-dir",
            str(out),
            "--vocab-size",
            "60",
            "--sequence-length",
            "16",
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout)
    assert summary["corpus"]["skipped"] == {"lines_not_utf8": 1} and summary["examples"] > 0
    # A missing input: one sentence and exit 2, through `main` in this process.
    from electra_tf.cli import main

    capsys.readouterr()
    code = main(["prepare", "--input", str(tmp_path / "nowhere"), "--output-dir", str(out)])
    said = capsys.readouterr().err
    assert code == 2 and "does not exist" in said and len(said.strip().splitlines()) == 1
    assert said.startswith("electra-tf prepare: ") and "Traceback" not in said


def _tree(folder):
    """Every file's digest; the report without its timing."""
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}
    report = json.loads((folder / "prepare_report.json").read_text())
    digests["prepare_report.json"] = (report["examples"], report["tokens"], report["corpus"])
    return digests


@pytest.mark.slow
def test_the_output_is_byte_identical_for_any_number_of_workers_up_to_three(tmp_path):
    """The full form of `test_the_output_is_byte_identical_for_any_number_of_workers`."""
    _check_byte_identical_for(tmp_path, workers=3)


def test_the_output_is_byte_identical_for_any_number_of_workers(tmp_path):
    """One worker and two spawned ones write the same bytes; the full form, three spawned
    workers, is `..._for_any_number_of_workers_up_to_three`."""
    _check_byte_identical_for(tmp_path, workers=2)


def _check_byte_identical_for(tmp_path, workers):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for f in range(6):
        blocks = ["\n".join(SENTENCES[(f + d + k) % 8] + f" ({f}.{d})" for k in range(1 + d % 4))
                  for d in range(25)]  # fmt: skip
        blocks[3] = blocks[20] = "\n".join(SENTENCES)  # the same document, in every file
        (corpus / f"part{f}.txt").write_text("\n\n".join(blocks) + "\n")
    with gzip.open(corpus / "zipped.txt.gz", "wt") as handle:
        handle.write("\n".join(SENTENCES) + "\n\nA last document here.\n")
    (corpus / "latin1.txt").write_bytes(b"The caf\xe9 opens early.\nPeople queue.\n")
    runs = {}
    for count, max_documents in ((1, None), (1, 130), (workers, 130)):
        out = tmp_path / f"data-{count}-{max_documents}"
        result = prepare_corpus(
            [TextSource([str(corpus)])], out, vocabulary_size=90, sequence_length=24,
            examples_per_shard=9, progress=False, workers=count, max_documents=max_documents,
            chunk_bytes=1500,
        )  # fmt: skip
        runs[count, max_documents] = _tree(out)
        assert result.workers == count and len(result.manifest.shards) > 6
    assert runs[1, 130] == runs[workers, 130]  # shards, vocabulary, counts, manifest, stats
    # Files in order: latin1.txt (1 document), part0-5.txt (25 each, the 4th and 21st the
    # same document), zipped.txt.gz (that document again, and one more).
    (_, _, limited) = runs[workers, 130]["prepare_report.json"]
    assert limited["documents"] == 130  # 1 + 4 x 25 + 4 of part5.txt: repeats 1 + 8 + 1
    assert limited["skipped"] == {"duplicate_documents": 10}
    (_, _, everything) = runs[1, None]["prepare_report.json"]
    assert everything["documents"] == 1 + 6 * 25 + 2
    assert everything["skipped"] == {"duplicate_documents": 6 * 2 - 1 + 1}
    assert everything["adjusted"] == {"files_read_as_cp1252": 1}
