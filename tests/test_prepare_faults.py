"""Faults injected into a (parallel) prepare: a killed worker, a second writer, a kill
between the renames that publish, a kill after the atomic swap. Each leaves the previous
data folder usable and says so in one sentence. The README's "What survives what" cites
these tests beside tests/test_fault_injection.py.
"""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from test_fault_injection import SENTENCES, _children

from electra_tf.data.corpus import CorpusError, TextSource
from electra_tf.data.prepare import prepare_corpus
from electra_tf.data.tfrecords import DataError, Manifest, resolve_files
from electra_tf.io import durable, folders


def _corpus(folder, documents=40, sentences=6, seed=0):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for d in range(documents):
        lines = [SENTENCES[i] for i in rng.integers(0, len(SENTENCES), size=sentences)]
        (folder / f"doc{d:04d}.txt").write_text(f"Document {d}. " + " ".join(lines) + "\n")
    return folder


def _digest(folder):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.name != "prepare_report.json"  # holds the timing
    }


def _prepare(corpus, out, **kwargs):
    return prepare_corpus(
        [TextSource([str(corpus)], layout="files")],
        out,
        vocabulary_size=120,
        sequence_length=32,
        examples_per_shard=20,
        progress=False,
        **kwargs,
    )


def test_a_killed_worker_ends_prepare_in_one_sentence_naming_its_input(tmp_path, capsys):
    """`electra-tf prepare --workers 2` through `main` in this process while a thread kills
    one of its workers (no fresh process for the command itself); the full form, the
    command in a fresh process, is `test_a_killed_worker_ends_a_fresh_prepare_process_...`."""
    from electra_tf.cli import main

    corpus = _corpus(tmp_path / "corpus", documents=3000, sentences=12)
    out = tmp_path / "data"
    small = _corpus(tmp_path / "small", documents=40)
    _prepare(small, out)
    shutil.rmtree(small)
    before = _digest(out)
    vocab = shutil.copy(out / "vocab.txt", tmp_path / "vocab.txt")
    scratch = tmp_path / ".data.prepare-tmp"
    killed = {}

    def kill_a_worker():  # once both workers are working, as the fresh-process form does
        deadline = time.time() + 120
        while time.time() < deadline and not (scratch.exists() and any(scratch.glob("chunk-*"))):
            time.sleep(0.01)
        workers = [pid for pid in _children(os.getpid()) if b"resource_tracker" not in _cmd(pid)]
        if workers:
            killed["pid"] = workers[0]
            os.kill(workers[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_a_worker, daemon=True)
    killer.start()
    capsys.readouterr()
    code = main([
        "prepare", "--input", str(corpus), "--layout", "files", "--output-dir", str(out),
        "--vocab-file", str(vocab), "--sequence-length", "32", "--quiet", "--workers", "2",
        "--chunk-bytes", "4096",
    ])  # fmt: skip
    killer.join(10)
    stderr = capsys.readouterr().err
    assert "pid" in killed, "prepare finished before a worker could be killed"
    victim = killed["pid"]
    said = [line for line in stderr.splitlines() if line.startswith("electra-tf")]
    assert code == 2 and len(said) == 1, stderr[-2000:]
    assert f"A prepare worker (pid {victim}) was killed (signal 9) while packing " in said[0]
    assert re.search(r"doc\d{4}\.txt from byte [\d,]+ .*\(chunk \d+\)", said[0]), said[0]
    assert said[0].endswith("use fewer --workers (the previous output is unchanged).")
    assert "Traceback" not in stderr
    assert _digest(out) == before and not scratch.exists()  # no scratch, no lock left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "data", "vocab.txt"]


@pytest.mark.slow
def test_a_killed_worker_ends_a_fresh_prepare_process_in_one_sentence_naming_its_input(tmp_path):
    corpus = _corpus(tmp_path / "corpus", documents=3000, sentences=12)
    out = tmp_path / "data"
    # The previous output, prepared from a small corpus of the same sentences (its words, so
    # its vocabulary serves the big one); the big corpus keeps the killed prepare running.
    small = _corpus(tmp_path / "small", documents=40)
    _prepare(small, out)
    shutil.rmtree(small)
    before = _digest(out)
    vocab = shutil.copy(out / "vocab.txt", tmp_path / "vocab.txt")
    command = [
        sys.executable, "-m", "electra_tf.cli", "prepare", "--input", str(corpus),
        "--layout", "files", "--output-dir", str(out), "--vocab-file", str(vocab),
        "--sequence-length", "32", "--quiet", "--workers", "2", "--chunk-bytes", "4096",
    ]  # fmt: skip
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    scratch = tmp_path / ".data.prepare-tmp"
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if scratch.exists() and any(scratch.glob("chunk-*")):  # both workers are working
            break
        time.sleep(0.01)
    assert process.poll() is None, "prepare finished before a worker could be killed"
    victim = next(pid for pid in _children(process.pid) if b"resource_tracker" not in _cmd(pid))
    os.kill(victim, signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)
    said = [line for line in stderr.decode().splitlines() if line.startswith("electra-tf")]
    assert process.returncode == 2 and len(said) == 1, stderr.decode()[-2000:]
    assert f"A prepare worker (pid {victim}) was killed (signal 9) while packing " in said[0]
    assert re.search(r"doc\d{4}\.txt from byte [\d,]+ .*\(chunk \d+\)", said[0]), said[0]
    assert said[0].endswith("use fewer --workers (the previous output is unchanged).")
    assert "Traceback" not in stderr.decode()
    assert _digest(out) == before and not scratch.exists()  # no scratch, no lock left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "data", "vocab.txt"]


def _cmd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def test_a_second_prepare_into_the_same_folder_is_refused_and_touches_nothing(tmp_path):
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data"
    _prepare(corpus, out)
    before = _digest(out)
    scratch = tmp_path / ".data.prepare-tmp"  # the first writer's work in progress
    scratch.mkdir()
    (scratch / "chunk-000000-0000.tfrecord").write_bytes(b"in progress")
    with folders.folder_lock(out, "electra-tf prepare"):  # as a first prepare holds it
        message = (
            rf"{out} is being written by another process \(electra-tf prepare, pid {os.getpid()}"
        )
        with pytest.raises(CorpusError, match=message + r".*wait for it to end or choose another"):
            _prepare(corpus, out, seed=7)
        assert (scratch / "chunk-000000-0000.tfrecord").read_bytes() == b"in progress"
    assert _digest(out) == before  # before the lock: the second one deleted this scratch
    assert not (tmp_path / ".data.lock").exists()  # released and removed
    shutil.rmtree(scratch)
    _prepare(corpus, out, seed=7)  # once the first is done, the folder is free


class _Killed(BaseException):
    """Stands for SIGKILL: no cleanup code runs after it (nothing catches BaseException
    there but to remove its own scratch, which a real kill would leave as well)."""


class _Module:
    """A module for `electra_tf.io.durable` with some functions replaced."""

    def __init__(self, module, **replaced):
        self.module, self.replaced = module, replaced

    def __getattr__(self, name):
        return self.replaced.get(name) or getattr(self.module, name)


def _second_rename_kills():
    renames = []

    def replace(source, target):
        if os.path.isdir(source):  # a folder's rename (files are written through renames too)
            renames.append(source)
        if len(renames) >= 2:  # killed: no rename from the second on (nor any undo)
            raise _Killed
        os.replace(source, target)

    return _Module(os, replace=replace)


def test_a_swap_killed_between_its_two_renames_is_undone_at_the_next_start(tmp_path, monkeypatch):
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data"
    _prepare(corpus, out)
    before = _digest(out)
    monkeypatch.setattr(durable, "exchange", lambda first, second: False)  # no RENAME_EXCHANGE
    monkeypatch.setattr(durable, "os", _second_rename_kills())
    with pytest.raises(_Killed):
        _prepare(corpus, out, seed=7)
    monkeypatch.undo()
    assert not out.exists() and (tmp_path / ".data.old").is_dir()  # before: deleted next run
    with pytest.raises(DataError, match=r"\.data\.old holds the folder's previous contents"):
        resolve_files(f"{out}/pretrain-*.tfrecord")  # what pretrain --data says meanwhile
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "e.txt").write_text("")
    with pytest.raises(CorpusError, match="No usable text.*"):
        _prepare(tmp_path / "empty", out)  # starts by putting the old folder back
    assert _digest(out) == before and not (tmp_path / ".data.old").exists()


def test_a_kill_after_the_atomic_swap_leaves_the_new_folder_and_an_untrusted_old_one(
    tmp_path, monkeypatch
):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    if not folders.exchange(a, b):
        pytest.skip("this file system has no RENAME_EXCHANGE")
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data"
    _prepare(corpus, out)
    before = _digest(out)
    inode = {}

    def synced(path):  # the scratch, finished, as the swap is about to publish it
        inode["scratch"] = os.stat(path).st_ino

    def killed_while_deleting(path, *args, **kwargs):  # the old folder, after the exchange
        inode["data"] = os.stat(out).st_ino
        raise _Killed

    monkeypatch.setattr(durable, "fsync_tree", synced)
    monkeypatch.setattr(durable, "shutil", _Module(shutil, rmtree=killed_while_deleting))
    with pytest.raises(_Killed):
        _prepare(corpus, out, seed=7)
    monkeypatch.undo()
    scratch = tmp_path / ".data.prepare-tmp"
    assert inode["data"] == inode["scratch"]  # the finished scratch became `data` in one rename
    assert Manifest.read(out).num_examples > 0 and _digest(out) != before  # the new one
    assert _digest(scratch) == before  # the old one, under the scratch name
    _prepare(corpus, out)  # never trusted: cleared; and the same input gives the same bytes
    assert _digest(out) == before and not scratch.exists()


def test_a_power_cut_after_prepare_returns_loses_none_of_its_files(tmp_path, monkeypatch):
    from power_cut import PowerCut

    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data"
    _prepare(corpus, out)  # a folder to replace
    power = PowerCut(monkeypatch, out)
    _prepare(corpus, out, seed=7)
    assert power.unsynced_files() == [] and power.unsynced_renames() == []
    assert len(list(out.glob("pretrain-*.tfrecord"))) > 1  # shards written by TensorFlow
