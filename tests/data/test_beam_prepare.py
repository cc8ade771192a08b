"""prepare on Apache Beam: the same bytes as a local run, idempotent chunks, clear failures."""

import builtins
import gzip
import json
import os
import pickle
import random
from pathlib import Path

import pytest

from electra_tf.data.chunk_work import ChunkSettings, ChunkWork, Verdict
from electra_tf.data.chunks import assemble_chunks, file_pieces
from electra_tf.data.corpus import (
    CorpusError,
    CorpusStats,
    TextSource,
    corpus_chunks,
    corpus_sources,
)
from electra_tf.data.prepare import default_workers, prepare_corpus
from electra_tf.data.shards import ShardWriter

pytest.importorskip("apache_beam")

import memtest_filesystem  # noqa: E402 - registers memtest://, a test Beam filesystem

from electra_tf.data import beam_prepare, beam_steps, remote_files  # noqa: E402
from electra_tf.data.remote_files import refusal  # noqa: E402

WORDS = (
    "river mill heron bank cloud hill rain roof baker bread shop queue morning evening "
    "market street window garden letter station bridge forest stone winter summer"
).split()


def _sentence(rng) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))).capitalize() + "."


def _document(rng) -> str:
    return "\n".join(_sentence(rng) for _ in range(rng.randint(2, 6))) + "\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Text files (one gzipped), JSON Lines, a repeated document, an empty and a binary file."""
    folder, rng = tmp_path_factory.mktemp("corpus"), random.Random(7)
    repeated = _document(rng)
    for name in ("a.txt", "b.txt", "d.txt"):
        documents = [_document(rng) for _ in range(40)]
        documents.insert(20, repeated)  # the same document in every file: dropped but once
        (folder / name).write_text("\n".join(documents))
    with gzip.open(folder / "c.txt.gz", "wt") as handle:
        handle.write("\n".join([repeated] + [_document(rng) for _ in range(30)]))
    (folder / "empty.txt").write_bytes(b"")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 8)
    lines = [json.dumps({"text": _document(rng).replace("\n", " ")}) for _ in range(60)]
    (folder / "e.jsonl").write_text("\n".join(lines) + "\n")
    names = ["a.txt", "empty.txt", "binary.txt", "b.txt", "c.txt.gz", "d.txt", "e.jsonl"]
    return [str(folder / name) for name in names]


OPTIONS = dict(
    vocabulary_size=120,
    sequence_length=32,
    examples_per_shard=9,
    max_documents=170,
    chunk_bytes=2000,
    progress=False,
)


def _prepare(corpus, out, **options):
    return prepare_corpus(corpus_sources(corpus), out, **{**OPTIONS, **options})


def _files(folder) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _same_output(local, beam, keys=("vocabulary",), renamed=(b"", b"")) -> None:
    """Every file byte for byte, but the report: its corpus counts and sizes (and `keys`),
    its file names changed by `renamed` (old, new)."""
    expected, got = _files(local), _files(beam)
    assert sorted(got) == sorted(expected)
    report = json.loads(expected.pop("prepare_report.json"))
    beam_report = json.loads(got.pop("prepare_report.json").replace(*renamed))
    for key in ("corpus", "examples", "tokens", "tokenized", "shards", *keys):
        assert beam_report[key] == report[key], key
    assert got == expected


@pytest.fixture(scope="module")
def local(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "data"
    result = _prepare(corpus, out, workers=1)
    report = json.loads((out / "prepare_report.json").read_text())
    # the corpus exercises what it should: many chunks and shards, skipped files, duplicates
    assert len(result.manifest.shards) > 10 and result.stats.documents == 170
    assert report["corpus"]["skipped"]["duplicate_documents"] >= 1
    assert {"empty_files", "binary_files"} <= set(report["corpus"]["skipped"])
    return out


@pytest.mark.slow
def test_beam_on_two_processes_learns_and_writes_the_same_bytes(corpus, local, tmp_path):
    out = tmp_path / "data"
    result = _prepare(corpus, out, workers=2, runner="beam")  # vocabulary learned on Beam
    assert json.loads((out / "prepare_report.json").read_text())["runner"] == "beam"
    assert not list(tmp_path.glob(".data*"))  # no scratch left beside the output
    assert result.examples > 0
    _same_output(local, out)


def test_beam_on_two_threads_learns_and_writes_the_same_bytes(corpus, local, tmp_path):
    """The pipeline on Beam's local runner with two workers as threads of this process (no
    worker imports TensorFlow afresh); the full form, two worker processes, is
    `test_beam_on_two_processes_learns_and_writes_the_same_bytes`."""
    out = tmp_path / "data"
    threads = ["--direct_running_mode=multi_threading"]  # after the defaults: it wins
    result = _prepare(corpus, out, workers=2, runner="beam", beam_options=threads)
    assert json.loads((out / "prepare_report.json").read_text())["runner"] == "beam"
    assert not list(tmp_path.glob(".data*"))  # no scratch left beside the output
    assert result.examples > 0
    _same_output(local, out)


@pytest.mark.slow
def test_beam_replaying_every_bundle_in_a_worker_process_writes_the_same_bytes(
    corpus, local, tmp_path
):
    """Each bundle runs twice (the runner's replay): a duplicated chunk writes the same files."""
    out = tmp_path / "data"
    options = ["--direct_num_workers=1", "--direct_runner_bundle_repeat=1"]
    _prepare(corpus, out, runner="beam", beam_options=options, vocab_file=local / "vocab.txt")
    _same_output(local, out, keys=())


def test_beam_replaying_every_bundle_writes_the_same_bytes(corpus, local, tmp_path):
    """Each bundle runs twice (the runner's replay): a duplicated chunk writes the same files.
    Here the bundles run in this process; the full form, in a worker process, is
    `test_beam_replaying_every_bundle_in_a_worker_process_writes_the_same_bytes`."""
    out = tmp_path / "data"
    options = ["--direct_running_mode=in_memory", "--direct_runner_bundle_repeat=1"]
    _prepare(corpus, out, runner="beam", beam_options=options, vocab_file=local / "vocab.txt")
    _same_output(local, out, keys=())


def test_chunk_assignment_replays_assemble_chunks(corpus):
    """The per-file cuts, assigned, are the local chunks, stats included, for tiny targets."""
    for target in (1, 700, 2000, 10**6):
        sources = corpus_sources(corpus)
        expected = list(corpus_chunks(sources, target))
        cuts, pieces = [], {}
        for number, source in enumerate(sources):
            for count, path in enumerate(source.files):
                cut_file = beam_steps.CutFile(target, opener=None)
                for item in cut_file((number, count, str(path), source.layout)):
                    if isinstance(item, beam_steps.FileCut):
                        cuts.append(item)
                    else:
                        pieces[item[0]] = item[1]
        described = [(s.layout, s.field, len(s.files)) for s in sources]
        numbers, chunks = beam_steps.assign_chunks(reversed(cuts), described, target)
        for key in sorted(pieces):
            chunks[numbers[key]].pieces.append(pieces[key])
        assert chunks == expected, target


def test_assignment_keeps_a_source_of_skipped_files_and_the_trailing_stats(corpus, tmp_path):
    """A source whose files are all skipped still gives a chunk (its stats), as locally."""
    (tmp_path / "zero.txt").write_bytes(b"")
    paths = [str(tmp_path / "zero.txt"), corpus[2]]  # empty, binary
    expected = list(assemble_chunks([s.stream(500) for s in corpus_sources(paths)], 500))
    sources = corpus_sources(paths)
    cuts = [
        list(beam_steps.CutFile(500, opener=None)((0, n, str(p), "lines")))[-1]
        for n, p in enumerate(sources[0].files)
    ]
    _, chunks = beam_steps.assign_chunks(cuts, [("lines", "text", 2)], 500)
    assert chunks == expected and len(chunks) == 1 and chunks[0].stats.files == 2


def test_beam_opener_reads_as_open_does(corpus):
    """Pieces through Beam's FileSystems equal those through `open` (gzip found by its bytes)."""
    for path in corpus[3:5]:
        plain, beam = CorpusStats(), CorpusStats()
        expected = list(file_pieces(path, "lines", 900, plain))
        got = list(file_pieces(path, "lines", 900, beam, opener=beam_steps.beam_opener))
        assert got == expected and beam == plain


def _settings(folder, vocab) -> ChunkSettings:
    return ChunkSettings(str(folder), str(vocab), True, True, 32, 12345, 3, True)


def _shards(folder) -> dict:
    return {p.name: p.read_bytes() for p in folder.glob("chunk-*.tfrecord")}


def test_a_chunk_packed_again_after_a_partial_attempt_writes_the_same_files(
    corpus, local, tmp_path, monkeypatch
):
    """A retry after a failure mid-chunk (a shard done, one half written) leaves the same files."""
    chunk = list(corpus_chunks(corpus_sources(corpus), 2000))[2]
    verdicts = {chunk.index: Verdict(10**6)}
    clean, retried = tmp_path / "clean", tmp_path / "retried"
    clean.mkdir(), retried.mkdir()
    beam_steps.PackChunk(_settings(clean, local / "vocab.txt"))(chunk, verdicts)

    written, real_write = [0], ShardWriter.write

    def write_then_fail(writer, record):
        real_write(writer, record)
        written[0] += 1
        if written[0] == 5:  # one shard of 3 renamed, the next one half written
            raise OSError(28, "No space left on device")

    pack = beam_steps.PackChunk(_settings(retried, local / "vocab.txt"))
    monkeypatch.setattr(ShardWriter, "write", write_then_fail)
    with pytest.raises(OSError):
        pack(chunk, verdicts)
    monkeypatch.setattr(ShardWriter, "write", real_write)
    partial = {p.name for p in retried.iterdir()}
    assert any(name.endswith(".tfrecord.tmp") for name in partial), partial
    error = json.loads((retried / ".beam" / f"error-{chunk.index:06d}.json").read_text())
    assert error["is_io"] and "chunk 2" in error["where"]
    pack(chunk, verdicts)  # the retry
    assert _shards(retried) == _shards(clean) and len(_shards(clean)) > 1
    assert not list(retried.glob("*.tmp"))
    results = [
        pickle.loads((f / ".beam" / "result-000002.pickle").read_bytes()) for f in (clean, retried)
    ]
    assert results[0].shards == results[1].shards
    assert (results[0].unigram == results[1].unigram).all()


def _fail_on_chunk_3(monkeypatch):
    """Chunk 3's tokenizing raises, wherever the runner packs it."""
    original = ChunkWork.tokenize

    def fail_on_chunk_3(self):
        if self.chunk.index == 3:
            raise ValueError("a tokenizer failure")
        return original(self)

    monkeypatch.setattr(ChunkWork, "tokenize", fail_on_chunk_3)


def test_a_failed_pipeline_keeps_the_previous_output(corpus, local, tmp_path, monkeypatch):
    """A chunk that fails on the in-process runner: one sentence naming it; nothing replaced."""
    out = tmp_path / "data"
    out.mkdir()
    (out / "manifest.json").write_text("{}")  # a previous output
    _fail_on_chunk_3(monkeypatch)
    options = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]
    with pytest.raises(CorpusError) as error:
        _prepare(corpus, out, runner="beam", beam_options=options, vocab_file=local / "vocab.txt")
    message = str(error.value)
    assert "(chunk 3) failed (ValueError: a tokenizer failure)" in message
    assert message.endswith("the previous output is unchanged.")
    assert _files(out) == {"manifest.json": b"{}"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_beam_missing_is_one_sentence_naming_the_extra(corpus, tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_beam(name, *args, **kwargs):
        if name == "apache_beam" or name.startswith("apache_beam."):
            raise ImportError("No module named 'apache_beam'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_beam)
    with pytest.raises(CorpusError, match=r'pip install -e "\.\[beam\]"') as error:
        _prepare(corpus, tmp_path / "data", runner="beam")
    assert str(error.value) == beam_prepare.BEAM_MISSING
    assert not (tmp_path / "data").exists()


def test_unknown_runner_and_tfds_input_are_refused(corpus, tmp_path):
    with pytest.raises(CorpusError, match="Unknown prepare runner 'spark'"):
        _prepare(corpus, tmp_path / "data", runner="spark")

    class Records:  # a source without files, as TFDS is
        pass

    with pytest.raises(CorpusError, match="prepare a TFDS dataset with --runner local"):
        beam_prepare.check_runner("beam", [Records()])


def test_cli_runs_beam_and_refuses_beam_options_without_it(corpus, local, tmp_path, capsys):
    from electra_tf.cli import main

    out = tmp_path / "data"
    flags = ["prepare", "--output-dir", str(out), "--vocab-file", str(local / "vocab.txt")]
    flags += [f"--input={path}" for path in corpus]
    flags += ["--sequence-length=32", "--examples-per-shard=9", "--max-documents=170"]
    flags += ["--chunk-bytes=2000", "--quiet"]
    assert main([*flags, "--beam-options=--direct_num_workers=1"]) == 2
    assert "--beam-options applies to --runner beam only" in capsys.readouterr().err
    in_process = "--beam-options=--direct_running_mode=in_memory --direct_num_workers=1"
    assert main([*flags, "--runner", "beam", in_process]) == 0
    assert json.loads(capsys.readouterr().out)["runner"] == "beam"
    _same_output(local, out, keys=())


def test_bench_times_a_tiny_beam_prepare(local, tmp_path):
    """`bench prepare --runner beam`'s fixed cost: one Beam prepare of a tiny input, timed."""
    from electra_tf.bench.prepare import beam_fixed_cost

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "part.txt").write_text(
        "\n".join(_document(random.Random(k)) for k in range(30)), encoding="utf-8"
    )
    record = beam_fixed_cost(corpus, str(local / "vocab.txt"), workers=1, kilobytes=4)
    assert record["kind"] == "beam_fixed_cost" and "error" not in record, record
    assert record["wall_s"] > 0 and record["tokens"] > 100


# Inputs on another filesystem: `memtest://` (tests/data/memtest_filesystem.py), a Beam
# filesystem over a local folder, stands for gs:// or s3:// (which are not tried here).


@pytest.fixture
def memtest(corpus, monkeypatch):
    """`memtest://` over the corpus' parent folder."""
    root = Path(corpus[0]).parent.parent
    monkeypatch.setenv(memtest_filesystem.ROOT_VARIABLE, str(root))
    return root


def _remote(path) -> str:
    return (
        memtest_filesystem.PREFIX
        + Path(path).relative_to(os.environ[memtest_filesystem.ROOT_VARIABLE]).as_posix()
    )


def _remote_inputs(corpus) -> list:
    """The corpus, in its order, as memtest:// paths and globs (the .gz and JSONL by glob)."""
    inputs = [_remote(path) for path in corpus]
    inputs[4] = inputs[4].replace(".gz", ".g?")
    inputs[6] = inputs[6].replace("e.jsonl", "*.jsonl")
    return inputs


def test_beam_reads_another_filesystem_to_the_same_bytes(corpus, local, memtest, tmp_path):
    """memtest:// paths and globs, listed by the driver and read by the workers (the
    vocabulary learned from them too): the local run's bytes, the report's names aside."""
    sources = corpus_sources(_remote_inputs(corpus), remote=True)
    local_files = [f for s in corpus_sources(corpus) for f in s.files]  # JSON Lines first
    assert [f for s in sources for f in s.files] == [_remote(path) for path in local_files]
    out = tmp_path / "data"
    # In this process: the FnApiRunner's worker processes get no pipeline options (an empty
    # ProvisionInfo), so --beam_plugins never imports memtest:// there, and a scheme is known
    # only where its module is imported (gs://, s3://, hdfs:// are imported by Beam itself).
    in_process = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]
    memtest_filesystem.OPENED.clear()
    prepare_corpus(sources, out, **OPTIONS, runner="beam", beam_options=in_process)
    assert set(memtest_filesystem.OPENED) == {_remote(path) for path in corpus}
    report = json.loads((out / "prepare_report.json").read_text())
    assert _remote(corpus[2]) in report["corpus"]["skipped_files"]  # read as memtest://
    renamed = (memtest_filesystem.PREFIX.encode(), str(memtest).encode() + b"/")
    _same_output(local, out, renamed=renamed)


def _renamed(pieces, stats) -> tuple:
    root = os.environ[memtest_filesystem.ROOT_VARIABLE] + "/"
    named = [(str(name).replace(memtest_filesystem.PREFIX, root), *rest) for name, *rest in pieces]
    return named, json.loads(json.dumps(stats.to_dict()).replace(memtest_filesystem.PREFIX, root))


def test_a_remote_sample_reads_the_same_windows(corpus, memtest):
    """The vocabulary's sample of a larger input (windows; the .gz from its start): the same."""
    local = TextSource(corpus[:6])
    remote = TextSource(_remote_inputs(corpus)[:6], remote=True)
    assert remote.input_bytes() == local.input_bytes() > 6400
    samples = []
    for source in (local, remote):
        _, _, pieces, stats = source.sample(6400, 64)
        samples.append(_renamed(list(pieces), stats))
    assert samples[1] == samples[0]
    assert any(name.endswith("c.txt.gz") for name, *_ in samples[0][0])
    assert any(start > 0 for *_, start in samples[0][0])  # windows inside plain files
    assert default_workers([remote], 100) == default_workers([local], 100)  # sizes as listed


def test_a_remote_folder_lists_as_a_local_one(tmp_path, monkeypatch):
    """A folder's text files, not hidden ones, sorted by path component as `Path`s sort."""
    monkeypatch.setenv(memtest_filesystem.ROOT_VARIABLE, str(tmp_path))
    names = ["a.txt", "a-c.txt", "a/b.txt", "a/sub/c.txt.gz", "a/.h.txt", ".hidden/x.txt"]
    names += ["img.png", "notes.md", "z.jsonl"]
    for name in names:
        (tmp_path / "tree" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / name).write_text("One.\n")
    (tmp_path / "other" / "img.png").parent.mkdir()
    (tmp_path / "other" / "img.png").write_bytes(b"PNG")
    expected = [_remote(path) for path in TextSource([tmp_path / "tree"]).files]
    assert expected[:3] == ["memtest://tree/a/b.txt", "memtest://tree/a/sub/c.txt.gz"] + [
        "memtest://tree/a-c.txt"
    ]  # "a/" before "a-c.txt" and "a.txt", as by component
    for spec in ("memtest://tree", "memtest://tree/"):
        assert TextSource([spec], remote=True).files == expected
    with pytest.raises(CorpusError, match=r"^Folder memtest://other holds no text files"):
        TextSource(["memtest://other"], remote=True)


def test_remote_inputs_are_refused_or_named_in_one_sentence(corpus, memtest, tmp_path, capsys):
    """--runner local refuses a remote path; a glob matching nothing, a missing path, an
    unknown scheme: one sentence each, before anything is written."""
    from electra_tf.cli import main

    glob = _remote_inputs(corpus)[0].replace("a.txt", "*.txt")
    out = tmp_path / "data"
    assert main(["prepare", "--input", glob, "--output-dir", str(out), "--quiet"]) == 2
    expected = (
        f"Input {glob} is not a local path: only prepare --runner beam reads other "
        "filesystems (gs://, s3://, ... through Apache Beam); prepare it with --runner beam."
    )
    assert expected in capsys.readouterr().err
    with pytest.raises(CorpusError) as error:  # sources that list it, a local run
        prepare_corpus(corpus_sources([glob], remote=True), out, **OPTIONS, runner="local")
    assert str(error.value) == str(refusal(_remote(corpus[0]))) and not out.exists()

    nothing = glob.replace("*.txt", "*.xml")
    flags = ["prepare", "--input", nothing, "--output-dir", str(out), "--runner", "beam"]
    assert main(flags) == 2
    message = f"Input {nothing} matches no files; check the path or pattern."
    assert message in capsys.readouterr().err and not out.exists()
    missing = glob.replace("*.txt", "missing")
    with pytest.raises(CorpusError, match=f"^Input path {missing} does not exist.$"):
        corpus_sources([missing], remote=True)
    with pytest.raises(CorpusError, match=r"^No Apache Beam filesystem reads nosuch://b/\*"):
        corpus_sources(["nosuch://b/*.txt"], remote=True)


def test_a_remote_output_folder_is_refused_before_anything_is_written(corpus, tmp_path):
    """--runner local refuses one; on Beam, a scheme no filesystem writes (gs:// without
    apache-beam[gcp] here): one sentence each; no local folder named "gs:" beside the command."""
    with pytest.raises(CorpusError) as error:
        prepare_corpus(corpus_sources(corpus), "gs://b/out", **OPTIONS)
    assert str(error.value) == (
        "--output-dir gs://b/out is on a remote filesystem; only --runner beam writes there "
        "(or prepare into a local or shared folder)."
    )
    with pytest.raises(CorpusError) as error:
        prepare_corpus(corpus_sources(corpus), "nosuch://b/out", **OPTIONS, runner="beam")
    assert str(error.value).startswith("No Apache Beam filesystem writes nosuch://b/out: ")
    assert not Path("gs:").exists() and not Path("nosuch:").exists()


# An output on another filesystem (electra_tf/data/beam_output.py): versions and a pointer,
# written to memtest:// (writes whole objects, no rename) on the in-process runner.

IN_PROCESS = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]
PREPARED = ("manifest.json", "vocab.txt", "unigram_counts.npy")


def _version(root, out="memtest://bucket/out") -> str:
    """The version `out/latest.json` names (read through FileSystems)."""
    pointer = json.loads(remote_files.read_object(out + "/latest.json"))
    assert sorted(pointer) == ["version"] and pointer["version"].startswith("versions/")
    return f"{out}/{pointer['version']}"


def _objects(prefix) -> dict:
    """Every object under `prefix`, by name relative to it, read through FileSystems."""
    paths = remote_files.list_objects(prefix + "/**")
    return {p[len(prefix) + 1 :]: remote_files.read_object(p) for p in paths}


def _same_as_local(local, objects) -> None:
    """The shards, vocabulary, counts and manifest equal the local run's byte for byte."""
    expected = {n: b for n, b in _files(local).items() if n != "prepare_report.json"}
    assert sorted(objects) == sorted([*expected, "prepare_report.json"])
    assert {n: b for n, b in objects.items() if n != "prepare_report.json"} == expected
    assert set(PREPARED) < set(expected) and len(expected) > 10


@pytest.fixture(scope="module")
def published(corpus, local, tmp_path_factory):
    """memtest://bucket/out written once on Beam (the vocabulary learned there): its root."""
    root = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(memtest_filesystem.ROOT_VARIABLE, str(root))
        result = _prepare(corpus, "memtest://bucket/out", runner="beam", beam_options=IN_PROCESS)
        version = _version(root)
        assert result.manifest.folder == version and result.examples > 0
    return root, version


def _store(published, tmp_path, monkeypatch):
    """A copy of the published store for one test, memtest:// pointed at it."""
    import shutil

    root = tmp_path / "store"
    shutil.copytree(published[0], root)
    monkeypatch.setenv(memtest_filesystem.ROOT_VARIABLE, str(root))
    return root


def test_beam_writes_a_version_and_a_pointer_to_an_object_store(local, published, monkeypatch):
    """Everything under the version the pointer names: the local run's bytes; nothing else."""
    root, version = published
    monkeypatch.setenv(memtest_filesystem.ROOT_VARIABLE, str(root))
    assert sorted(_objects("memtest://bucket/out")) == ["latest.json"] + sorted(
        f"{version[len('memtest://bucket/out/') :]}/{name}" for name in _objects(version)
    )
    _same_as_local(local, _objects(version))
    report = json.loads(_objects(version)["prepare_report.json"])
    expected = json.loads((local / "prepare_report.json").read_text())
    for key in ("corpus", "examples", "tokens", "tokenized", "shards", "vocabulary"):
        assert report[key] == expected[key], key


def test_a_failed_run_leaves_the_pointer_and_the_previous_version(
    corpus, local, published, tmp_path, monkeypatch
):
    """A chunk failing on Beam: one sentence; the pointer and the first version unchanged,
    the partial version left and named."""
    root = _store(published, tmp_path, monkeypatch)
    before = _objects(published[1])
    _fail_on_chunk_3(monkeypatch)
    with pytest.raises(CorpusError) as error:
        _prepare(
            corpus, "memtest://bucket/out", runner="beam", beam_options=IN_PROCESS,
            vocab_file=local / "vocab.txt",
        )  # fmt: skip
    assert _version(root) == published[1] and _objects(published[1]) == before
    (partial,) = {p.name for p in (root / "bucket/out/versions").iterdir()} - {
        published[1].rsplit("/", 1)[1]
    }
    where = list(corpus_chunks(corpus_sources(corpus), OPTIONS["chunk_bytes"]))[3].where()
    assert "(chunk 3)" in where
    assert str(error.value) == (
        f"Preparing {where} failed (ValueError: a tokenizer failure); "
        "memtest://bucket/out/latest.json was "
        "not changed (readers keep the previous version) and the partial "
        f"memtest://bucket/out/versions/{partial}/ is left: delete it."
    )


def test_a_second_run_moves_the_pointer_and_keeps_the_old_version(
    corpus, local, published, tmp_path, monkeypatch
):
    _store(published, tmp_path, monkeypatch)
    before = _objects(published[1])
    options = dict(runner="beam", beam_options=IN_PROCESS, vocab_file=local / "vocab.txt")
    result = _prepare(corpus, "memtest://bucket/out/", **options)
    second = _version(tmp_path / "store")
    assert second != published[1] and result.manifest.folder == second
    _same_as_local(local, _objects(second))
    assert _objects(published[1]) == before  # the old version still there, as it was


def test_readers_follow_the_pointer_of_a_local_folder(local, published, tmp_path):
    """A folder laid out as on the object store (here the one memtest:// wrote): the manifest
    reader and config_for_data use the version it names; a pointer naming a missing version
    or unreadable: one sentence."""
    import shutil

    from electra_tf.config import ElectraConfig
    from electra_tf.data.tfrecords import DataError, Manifest, resolve_files
    from electra_tf.pretraining.objectives.unigram import unigram_counts_path
    from electra_tf.pretraining.run_config import config_for_data

    out = tmp_path / "out"
    shutil.copytree(published[0] / "bucket" / "out", out)
    version = out / published[1].split("/out/", 1)[1]
    files, counts, manifest = resolve_files(str(out))
    expected = Manifest.read(local)
    assert files == [str(version / name) for name, _ in expected.shards]
    assert counts == expected.counts and manifest.folder == str(version)
    assert Manifest.read(out).files == files
    config = config_for_data(ElectraConfig().override(f"data.train_files={out}"))
    assert config.data.vocab_file == str(version / "vocab.txt")
    assert config.model.vocabulary_size == expected.vocabulary_size
    assert unigram_counts_path(config) == str(version / "unigram_counts.npy")

    (out / "latest.json").write_text('{"version": "versions/gone"}')
    with pytest.raises(DataError) as error:
        resolve_files(str(out))
    assert str(error.value) == (
        f"{out}/latest.json names versions/gone, but {out}/versions/gone/manifest.json does "
        f"not exist; restore that version or re-run `electra-tf prepare --runner beam` for {out}."
    )
    (out / "latest.json").write_text('{"version": "../elsewhere"}')
    with pytest.raises(DataError, match=r"latest.json is not a readable version pointer \("):
        Manifest.read(out)


def test_a_store_tensorflow_reads_gives_the_same_data(local, published):
    """The published store copied into TensorFlow's ram:// filesystem (a stand-in for gs://,
    which tf.io.gfile reads the same way): the files, vocabulary, counts and records a
    pre-training run reads through the pointer equal the local run's."""
    import numpy as np
    import tensorflow as tf

    from electra_tf.config import ElectraConfig
    from electra_tf.data.tfrecords import Manifest, resolve_files
    from electra_tf.data.vocabulary import read_vocabulary
    from electra_tf.pretraining.objectives.unigram import read_counts, unigram_counts_path
    from electra_tf.pretraining.run_config import config_for_data

    source = published[0] / "bucket" / "out"
    out = "ram://store-test/out"
    for path in sorted(source.rglob("*")):
        if path.is_file():
            target = f"{out}/{path.relative_to(source).as_posix()}"
            tf.io.gfile.makedirs(target.rsplit("/", 1)[0])
            with tf.io.gfile.GFile(target, "wb") as file:
                file.write(path.read_bytes())
    version = f"{out}/{published[1].split('/out/', 1)[1]}"
    files, counts, manifest = resolve_files(out)
    expected = Manifest.read(local)
    assert files == [f"{version}/{name}" for name, _ in expected.shards]
    assert counts == expected.counts and manifest.folder == version
    config = config_for_data(ElectraConfig().override(f"data.train_files={out}"))
    assert config.data.vocab_file == f"{version}/vocab.txt"
    assert read_vocabulary(config.data.vocab_file) == read_vocabulary(local / "vocab.txt")
    assert unigram_counts_path(config) == f"{version}/unigram_counts.npy"
    np.testing.assert_array_equal(
        read_counts(unigram_counts_path(config)), np.load(local / "unigram_counts.npy")
    )
    records = [r.numpy() for r in tf.data.TFRecordDataset(files[:2])]
    assert records == [r.numpy() for r in tf.data.TFRecordDataset(expected.files[:2])]
    assert len(records) > 0


def _no_network(monkeypatch):
    """Any connection or name lookup, and any pipeline started, fails the test."""
    import socket

    import apache_beam

    def contacted(*args, **kwargs):
        raise AssertionError("the refusal came after something was contacted or started")

    monkeypatch.setattr(socket.socket, "connect", contacted)
    monkeypatch.setattr(socket, "create_connection", contacted)
    monkeypatch.setattr(socket, "getaddrinfo", contacted)
    monkeypatch.setattr(apache_beam, "Pipeline", contacted)


FLINK = "apache_beam.runners.portability.flink_runner.FlinkRunner"


@pytest.mark.parametrize(
    "options,runner",
    [(["--runner=DataflowRunner", "--project=p"], "DataflowRunner"),
     (["--project=p", "--runner", "dataflow"], "dataflow"), ([f"--runner={FLINK}"], FLINK)],
)  # fmt: skip
def test_a_cluster_runner_with_a_local_output_folder_is_refused_before_the_job(
    corpus, tmp_path, monkeypatch, options, runner
):
    _no_network(monkeypatch)
    out = tmp_path / "data"
    with pytest.raises(CorpusError) as error:
        _prepare(corpus, out, runner="beam", beam_options=options)
    assert str(error.value) == (
        f"--output-dir {out} is a local folder, which the workers of --runner={runner} cannot "
        "write; give a gs:// (or another object store's) --output-dir."
    )
    assert sorted(tmp_path.iterdir()) == []  # no folder, lock or scratch


def test_the_cli_refuses_dataflow_into_a_local_folder_in_one_sentence(
    corpus, tmp_path, monkeypatch, capsys
):
    from electra_tf.cli import main

    _no_network(monkeypatch)
    out = tmp_path / "data"
    flags = ["prepare", "--output-dir", str(out), "--runner", "beam", "--quiet"]
    flags += [f"--input={path}" for path in corpus]
    options = "--runner=DataflowRunner --project=p --region=r --temp_location=gs://b/tmp"
    assert main([*flags, f"--beam-options={options}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"electra-tf prepare: --output-dir {out} is a local folder, which the workers of "
        "--runner=DataflowRunner cannot write; give a gs:// (or another object store's) "
        "--output-dir."
    )
    assert not out.exists()
