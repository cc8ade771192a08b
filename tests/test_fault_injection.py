"""Faults injected on purpose: each leaves the last good data and checkpoint usable and says so.

Divergence, a killed re-prepare, corrupt checkpoints, a full disk, arbitrary bytes as
text, and data given as globs. The README's "What survives what" cites these tests.
"""

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers import VOCAB, functions_run_eagerly, tiny_config, write_packed

from electra_tf.cli import main
from electra_tf.config import ConfigError
from electra_tf.data.corpus import CorpusError, CorpusStats, TextSource, read_documents
from electra_tf.data.packing import ExampleBuilder
from electra_tf.data.prepare import ShardWriter, prepare_corpus
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.callbacks import NonfiniteGuard
from electra_tf.pretraining.checkpoint import (
    Checkpointer,
    CheckpointError,
    find_checkpoint,
    first_nonfinite_weight,
    load_pretrainer,
    save_pretrainer,
)
from electra_tf.pretraining.optimizer import ElectraAdamW
from electra_tf.pretraining.pretrainer import ElectraPretrainer

SENTENCES = [
    "The committee met on Tuesday to discuss the budget.",
    "Several members raised questions about spending on roads.",
    "A final vote is expected before the end of the month.",
    "Local residents have asked for more parks and libraries.",
    "The mayor said the plan would be published next week.",
]


def _pretrain(data, run, *more, steps=4):
    args = ["pretrain", "--data", data, "--output-dir", str(run), "--steps", str(steps)]
    small = ["--batch-size", "4", "--verbose", "0", "--set", "train.warmup_steps=0"]
    every = ["--set", "train.checkpoint_every=2", "--set", "train.log_every=1"]
    shrink = ["--set", "model.num_layers=1", "--set", "model.hidden_dim=16"]
    shrink += ["--set", "model.embedding_dim=8", "--set", "model.intermediate_dim=32"]
    return main([*args, *small, *every, *shrink, *more])


def _checkpoints(run):
    folder = run / "checkpoints"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# Divergence ----------------------------------------------------------------------------------


def test_a_non_finite_step_changes_no_weight_and_no_moment():
    w = tf.Variable([1.0, 2.0], name="kernel")
    optimizer = ElectraAdamW(learning_rate=0.1, weight_decay=0.01, clip_norm=1.0)
    assert bool(optimizer.apply([tf.constant([0.5, -0.5])], [w]))
    before = [v.numpy().copy() for v in (w, *optimizer.variables)]
    assert not bool(optimizer.apply([tf.constant([np.nan, 1.0])], [w]))
    assert not bool(optimizer.apply([tf.constant([1.0, 1.0])], [w], loss=tf.constant(np.inf)))
    after = [v.numpy() for v in (w, *optimizer.variables)]
    counters = [i for i, v in enumerate(optimizer.variables, 1) if "iteration" in v.path]
    for i, (a, b) in enumerate(zip(before, after)):
        if i in counters:
            assert int(b) == int(a) + 2  # the step counter goes on: data and masks stay aligned
        else:
            np.testing.assert_array_equal(a, b)  # weights, moments: untouched
    assert bool(optimizer.apply([tf.constant([0.5, -0.5])], [w]))
    assert not np.array_equal(w.numpy(), before[0])


def test_guard_stops_at_once_or_after_too_many_skips_in_a_row():
    class Model:
        stop_training = False

        class optimizer:  # noqa: N801 - a stand-in with the attribute the guard reads
            iterations = tf.Variable(0, dtype=tf.int64)

    def run(guard, flags):
        guard.set_model(Model())
        for flag in flags:
            Model.optimizer.iterations.assign_add(1)
            guard.on_train_batch_end(0, {"nonfinite": flag})
            if guard.model.stop_training:
                break
        return guard.failed_at, guard.skipped

    cases = [
        ("stop", [0.0, 0.0, 1.0, 0.0], (3, 1)),  # the first non-finite step ends the run
        ("skip", [1.0, 0.0, 1.0, 0.0], (None, 2)),  # never two in a row: it goes on
        ("skip", [0.0, 1.0, 1.0, 0.0], (3, 2)),  # two in a row: it stops there
    ]
    for mode, flags, expected in cases:
        Model.optimizer.iterations.assign(0)
        assert run(NonfiniteGuard(mode, max_skips=2), flags) == expected, mode


@pytest.fixture(scope="module")
def four_steps(tmp_path_factory):
    """(packed data, a finished 4-step run checkpointed at steps 2 and 4), trained once
    (eagerly) for this file's default resume tests; each test resumes its own copy
    (`_four_step_run`). Their full forms train their own run, traced."""
    folder = tmp_path_factory.mktemp("four_steps")
    data = write_packed(folder / "data", n=64, seq=16)
    with functions_run_eagerly():
        assert _pretrain(data, folder / "run") == 0
    return data, folder / "run"


def _four_step_run(four_steps, tmp_path):
    """(data, this test's copy of the shared 4-step run)."""
    data, run = four_steps
    return data, shutil.copytree(run, tmp_path / "run")


@pytest.mark.slow
def test_divergence_exits_non_zero_and_keeps_only_finite_checkpoints_after_its_own_run(
    tmp_path, capsys
):
    """The full form of `test_divergence_exits_non_zero_and_keeps_only_finite_checkpoints`:
    the 4-step run it resumes is its own, trained keeping two checkpoints."""
    data = write_packed(tmp_path / "data", n=64, seq=16)
    run = tmp_path / "run"
    assert _pretrain(data, run, "--set", "train.keep_checkpoints=2") == 0
    _check_divergence(data, run, capsys)


def test_divergence_exits_non_zero_and_keeps_only_finite_checkpoints(tmp_path, capsys, four_steps):
    """Resumes a copy of this file's shared 4-step run, its steps run eagerly; the full
    form, which trains its own run first and traces its steps, is
    `..._keeps_only_finite_checkpoints_after_its_own_run`."""
    with functions_run_eagerly():
        _check_divergence(*_four_step_run(four_steps, tmp_path), capsys)


def _check_divergence(data, run, capsys):
    assert _checkpoints(run) == ["step-00000002", "step-00000004"]
    # Resumed with an absurd learning rate, it diverges; pruning never removes the last
    # good checkpoint and no checkpoint holds a NaN.
    code = _pretrain(
        data, run, "--set", "train.learning_rate=1e6", "--set", "train.keep_checkpoints=2", steps=40
    )
    message = capsys.readouterr().err
    assert code == 2 and "electra-tf pretrain: Training diverged at step" in message
    assert "the last good one" in message and "Traceback" not in message
    summary = json.loads((run / "last_run.json").read_text())  # valid JSON, NaN as null
    assert summary["status"] == "diverged"
    for name in _checkpoints(run):
        model = load_pretrainer(run / "checkpoints" / name)
        assert first_nonfinite_weight(model) is None, name
    assert len(_checkpoints(run)) >= 1


def test_a_non_finite_rate_is_refused_before_anything_runs(tmp_path, capsys):
    data = write_packed(tmp_path / "data", n=16, seq=16)
    assert _pretrain(data, tmp_path / "run", "--set", "train.learning_rate=nan") == 2
    assert "train.learning_rate must be a finite number" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_checkpoints_and_exports_refuse_non_finite_weights(tmp_path):
    model = ElectraPretrainer(tiny_config())
    save_pretrainer(model, tmp_path / "run")
    weight = model.discriminator.encoder.transformer_layers[0].weights[0]
    weight.assign(np.full(weight.shape, np.nan, np.float32))
    with pytest.raises(CheckpointError, match=f"the weight {weight.path} is not finite"):
        Checkpointer(tmp_path / "run" / "checkpoints", model).save(1)
    assert _checkpoints(tmp_path / "run") == ["step-00000000"]
    from electra_tf.serving.formats import export_model

    with pytest.raises(ConfigError, match="is not finite, so nothing was exported"):
        export_model(model, tmp_path / "out", "serving", vocab_file="unused")


# Checkpoints that do not verify --------------------------------------------------------------


@pytest.mark.parametrize(
    "damage", ["truncated data", "bad index", "empty config", "no state", "altered data"]
)
def test_a_corrupt_newest_checkpoint_is_set_aside_and_the_previous_one_used(tmp_path, damage):
    model = ElectraPretrainer(tiny_config())
    model.compile()
    checkpointer = Checkpointer(tmp_path / "checkpoints", model, log=lambda _: None)
    checkpointer.save(2)
    newest = checkpointer.save(4)
    data = next(newest.glob("ckpt.data-*"))
    if damage == "truncated data":
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    elif damage == "bad index":
        (newest / "ckpt.index").write_bytes(b"not an index")
    elif damage == "empty config":
        (newest / "config.json").write_text("")
    elif damage == "no state":
        (newest / "state.json").unlink()
    else:
        raw = bytearray(data.read_bytes())
        raw[100] ^= 0xFF
        data.write_bytes(bytes(raw))
    lines = []
    found = find_checkpoint(tmp_path, log=lines.append)
    assert found.name == "step-00000002"
    assert (tmp_path / "checkpoints" / "step-00000004.corrupt").is_dir()  # kept, not deleted
    assert len(lines) == 1 and "step-00000004 is not usable" in lines[0]
    assert checkpointer.restore(found) == 2
    (found / "state.json").unlink()
    with pytest.raises(CheckpointError, match=r"has no state.json\); give the run folder"):
        find_checkpoint(found)  # a step-N folder named directly is refused, not moved


@pytest.mark.slow
def test_resume_falls_back_past_a_corrupt_checkpoint_of_its_own_run(tmp_path, capsys):
    """The full form of `test_resume_falls_back_past_a_corrupt_checkpoint`: it trains the
    4-step run it resumes."""
    data = write_packed(tmp_path / "data", n=64, seq=16)
    run = tmp_path / "run"
    assert _pretrain(data, run) == 0
    _check_fall_back(data, run, capsys)


def test_resume_falls_back_past_a_corrupt_checkpoint(tmp_path, capsys, four_steps):
    """Resumes a copy of this file's shared 4-step run, its steps run eagerly; the full
    form, which trains its own run first and traces its steps, is
    `test_resume_falls_back_past_a_corrupt_checkpoint_of_its_own_run`."""
    with functions_run_eagerly():
        _check_fall_back(*_four_step_run(four_steps, tmp_path), capsys)


def _check_fall_back(data, run, capsys):
    capsys.readouterr()
    newest = run / "checkpoints" / "step-00000004"
    next(newest.glob("ckpt.data-*")).write_bytes(b"")
    assert _pretrain(data, run, steps=6) == 0
    assert "step-00000004 is not usable" in capsys.readouterr().err
    assert _checkpoints(run) == [
        "step-00000002",
        "step-00000004",  # written again on the way from 2 to 6
        "step-00000004.corrupt",
        "step-00000006",
    ]
    assert json.loads((run / "last_run.json").read_text())["resumed_from"] == 2


# A full disk or a read-only folder -----------------------------------------------------------


def test_a_full_disk_while_checkpointing_leaves_no_scratch_and_the_last_checkpoint(
    tmp_path, monkeypatch
):
    model = ElectraPretrainer(tiny_config())
    model.compile()
    checkpointer = Checkpointer(tmp_path / "checkpoints", model)
    checkpointer.save(2)
    original = tf.train.Checkpoint.write

    def full_disk(self, prefix, *args, **kwargs):
        original(self, prefix, *args, **kwargs)  # half the files are there, then no space
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tf.train.Checkpoint, "write", full_disk)
    with pytest.raises(CheckpointError, match="No space left on device.*untouched"):
        checkpointer.save(4)
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["step-00000002"]
    monkeypatch.undo()
    assert find_checkpoint(tmp_path).name == "step-00000002"


def _corpus(folder, documents=40, sentences=6):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for d in range(documents):
        lines = [SENTENCES[i] for i in rng.integers(0, len(SENTENCES), size=sentences)]
        (folder / f"doc{d:04d}.txt").write_text(f"Document {d}. " + " ".join(lines) + "\n")
    return folder


def _tree_digest(folder):
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


def test_a_full_disk_while_preparing_leaves_the_previous_output(tmp_path, monkeypatch):
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data"
    _prepare(corpus, out)
    before = _tree_digest(out)

    def full_disk(self, serialized):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ShardWriter, "write", full_disk)
    with pytest.raises(CorpusError, match="No space left on device.*previous output is unchanged"):
        _prepare(corpus, out, seed=7)
    assert _tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "data"]  # no scratch


def test_reprepare_is_byte_identical_and_never_reads_its_own_output(tmp_path):
    corpus = _corpus(tmp_path / "corpus")
    out = corpus / "prepared"  # the output inside the input folder
    first = _prepare(corpus, out)
    digest = _tree_digest(out)
    second = _prepare(corpus, out)
    assert _tree_digest(out) == digest  # shards, vocabulary, counts, manifest
    assert first.stats.files == second.stats.files == 40
    with pytest.raises(CorpusError, match="holds files prepare did not write"):
        _prepare(tmp_path / "corpus", tmp_path)  # a folder of other things is never replaced


def test_a_killed_reprepare_leaves_the_old_folder_byte_identical(tmp_path):
    corpus = _corpus(tmp_path / "corpus", documents=3000, sentences=12)
    small = _corpus(tmp_path / "small")  # the old folder's input: quicker to prepare
    out = tmp_path / "data"
    _prepare(small, out)
    before = {**_tree_digest(out), "report": (out / "prepare_report.json").read_bytes()}
    command = [
        sys.executable, "-m", "electra_tf.cli", "prepare", "--input", str(corpus),
        "--layout", "files", "--output-dir", str(out), "--vocab-size", "90",
        "--sequence-length", "32", "--examples-per-shard", "20", "--quiet",
        "--workers", "2", "--chunk-bytes", "8192",
    ]  # fmt: skip
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    scratch = tmp_path / ".data.prepare-tmp"
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if scratch.exists() and any(scratch.glob("chunk-*")):  # the workers are writing
            break
        time.sleep(0.01)
    assert process.poll() is None, "prepare finished before it could be killed"
    workers = _children(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert {**_tree_digest(out), "report": (out / "prepare_report.json").read_bytes()} == before
    deadline = time.time() + 30  # no worker outlives its prepare
    while time.time() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert len(workers) >= 2 and not [pid for pid in workers if _alive(pid)]
    result = _prepare(small, out)  # the next run clears the scratch and finishes
    assert not scratch.exists() and result.examples > 0


def _stat(pid):
    """(state, parent pid) of a process from /proc, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def _alive(pid):
    return (_stat(pid) or ("Z",))[0] != "Z"


def _children(pid):
    """The living processes whose parent is `pid`."""
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and (_stat(e) or ("", 0))[1] == pid]


# Text that is not text -----------------------------------------------------------------------


def _watchdog(seconds, function):
    outcome = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # noqa: BLE001 - reported below
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"did not finish within {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_arbitrary_bytes_through_the_whole_text_path_never_raise(tmp_path):
    rng = np.random.default_rng(1234)
    folder = tmp_path / "fuzz"
    folder.mkdir()
    # Odd but decodable text (control characters, zero-width and combining marks, emoji,
    # right-to-left, a lone BOM, 300-letter words) and bytes that are not UTF-8 at all
    # (lone surrogate halves, a cut multi-byte character, 0xff).
    odd = ["\x01\x02\x1b[0m", "\u200b", "\ufeff", "e\u0301", "\U0001f600", "\u05e9\u05dc",
           "\x7f", "x" * 300, "\t\t"]  # fmt: skip
    invalid = [b"\xed\xa0\x80", b"\xed\xb0\x80", b"\xc3", b"\xff\xfe", b"\xe2\x82"]
    for i in range(12):
        body = bytearray()
        for _ in range(400):
            kind = int(rng.integers(0, 5))
            if kind == 0 and i < 4:  # the first files are mostly random bytes
                body += bytes(rng.integers(0, 256, size=int(rng.integers(1, 40)), dtype=np.uint8))
            elif kind == 1:
                body += invalid[int(rng.integers(0, len(invalid)))]
            elif kind == 2:
                body += odd[int(rng.integers(0, len(odd)))].encode()
            elif kind == 3:
                body += b"\n" if rng.random() < 0.5 else b"\r\n\n"
            else:
                body += SENTENCES[int(rng.integers(0, len(SENTENCES)))].encode() + b" "
        if i == 4:
            body = b"word " * 300_000  # a 1.5 MB line
        (folder / f"f{i}.txt").write_bytes(bytes(body))
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS)
        + sorted({w.lower().strip(".") for s in SENTENCES for w in s.split()})
        + ["word", "cafe", "."],
        tmp_path / "vocab.txt",
    )
    tokenizer = ElectraTokenizer(vocab)

    def whole_path():
        stats = CorpusStats()
        builder = ExampleBuilder(32, tokenizer.cls_id, tokenizer.sep_id, seed=0)
        examples = 0
        for document in read_documents([TextSource([str(folder)])], stats):
            for ids in tokenizer.tokenize(tf.constant(document)).to_list():
                examples += builder.add_sentence(ids) is not None
            examples += builder.end_document() is not None
        return examples, stats

    examples, stats = _watchdog(120, whole_path)
    assert examples > 0
    assert stats.skipped["binary_files"] >= 1 and stats.adjusted["long_lines_split"] >= 1


def test_degenerate_corpora_get_one_sentence(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for i in range(3):
        (empty / f"e{i}.txt").write_text("")
    with pytest.raises(CorpusError, match="No usable text to learn a vocabulary from"):
        _prepare(empty, tmp_path / "out-empty")
    one_line = tmp_path / "one-line"
    one_line.mkdir()
    (one_line / "big.txt").write_text(" ".join(SENTENCES) * 11_000)  # 3 MB, no newline
    result = _prepare(one_line, tmp_path / "out-line")
    assert result.examples > 1000 and result.stats.adjusted["long_lines_split"] == 1


# Data given as files or globs ----------------------------------------------------------------


def test_globs_read_the_manifest_beside_the_shards(tmp_path, capsys, steps_run):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    data = write_packed(tmp_path / "data", n=32, seq=16, vocab=VOCAB)
    glob = f"{data}/shard-*.tfrecord"
    assert _pretrain(glob, tmp_path / "run", steps=2) == 0
    saved = load_pretrainer(tmp_path / "run").config
    assert saved.model.vocabulary_size == VOCAB and saved.data.mask_id == 4
    code = _pretrain(glob, tmp_path / "run2", "--set", "model.vocabulary_size=1024", steps=2)
    assert code == 2 and "model.vocabulary_size=1024 disagrees with" in capsys.readouterr().err
    bare = write_packed(tmp_path / "bare", n=32, seq=16, manifest=False)
    assert _pretrain(f"{bare}/shard-*.tfrecord", tmp_path / "run3", steps=2) == 2
    assert "have no manifest.json beside them" in capsys.readouterr().err
