"""Faults of issue 32, injected on purpose: each keeps finished work and says so in one sentence.

Unhealthy checkpoints in skip mode (1), checkpoints without a record (2), a power cut
(3, with the `power_cut` double), read-only and full output folders (5), shards
prepared differently (6) and mixed_float16 divergence (7). The README's "What survives
what" cites these tests.
"""

import contextlib
import errno
import io
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from helpers import functions_run_eagerly, tiny_config, write_packed
from power_cut import PowerCut

from electra_tf.cli import main
from electra_tf.config import ConfigError
from electra_tf.pretraining.callbacks import NonfiniteGuard
from electra_tf.pretraining.checkpoint import (
    Checkpointer,
    find_checkpoint,
    load_pretrainer,
)
from electra_tf.pretraining.optimizer import MIN_LOSS_SCALE
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _pretrain(data, run, *more, steps=4):
    args = ["pretrain", "--data", data, "--output-dir", str(run), "--steps", str(steps)]
    small = ["--batch-size", "4", "--verbose", "0", "--set", "train.warmup_steps=0"]
    every = ["--set", "train.checkpoint_every=2", "--set", "train.log_every=1"]
    shrink = ["--set", "model.num_layers=1", "--set", "model.hidden_dim=16"]
    shrink += ["--set", "model.embedding_dim=8", "--set", "model.intermediate_dim=32"]
    return main([*args, *small, *every, *shrink, *more])


def _names(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _weights(model):
    return [w.numpy().copy() for w in model.weights]


def _checkpointer(folder, keep=3, precision=None):
    config = tiny_config(*([f"train.mixed_precision={precision}"] if precision else []))
    model = ElectraPretrainer(config)
    model.compile()
    return Checkpointer(folder, model, keep=keep, log=lambda _: None)


def _six_steps(tmp_path_factory):
    """(packed data, a finished 6-step run checkpointed at steps 2, 4 and 6, its weights),
    trained once for this file's divergence tests; each test resumes its own copy."""
    folder = tmp_path_factory.mktemp("six_steps")
    data = write_packed(folder / "data", n=64, seq=16)
    assert _pretrain(data, folder / "run", steps=6) == 0
    return data, folder / "run", _weights(load_pretrainer(folder / "run"))


@pytest.fixture(scope="module")
def six_steps_traced(tmp_path_factory):
    """`_six_steps`, traced: for the `[traced]` full forms."""
    return _six_steps(tmp_path_factory)


@pytest.fixture(scope="module")
def six_steps_eager(tmp_path_factory):
    """`_six_steps`, its steps run eagerly: for the `[eager]` default twins."""
    with functions_run_eagerly():
        return _six_steps(tmp_path_factory)


@pytest.fixture
def six_steps(request, steps_run):
    """The shared 6-step run made as the test's `steps_run` says: traced for the `[traced]`
    full forms, eagerly for the `[eager]` default twins."""
    return request.getfixturevalue(f"six_steps_{steps_run}")


def _six_step_run(six_steps, tmp_path):
    """(data, this test's copy of the shared 6-step run, the weights of its step 6)."""
    data, run, good = six_steps
    return data, shutil.copytree(run, tmp_path / "run"), good


# 1. Skip mode never prunes the last good checkpoint; "good" means healthy ------------------


class _Judged:
    """A checkpointer stand-in that records the guard's verdicts."""

    def __init__(self):
        self.verdicts = []

    def judge(self, healthy, reason=""):
        self.verdicts.append(healthy)

    def lowest_loss_at(self, step):
        self.lowest = step

    def distrust_after(self, step, reason):
        self.verdicts.append(("after", step))


def test_the_guard_judges_losses_out_of_their_recent_range_and_skipped_steps():
    class Model:
        stop_training = False

        class optimizer:  # noqa: N801 - a stand-in with the attribute the guard reads
            iterations = tf.Variable(0, dtype=tf.int64)

    judged = _Judged()
    guard = NonfiniteGuard("skip", max_skips=5, checkpointer=judged, window=3, spike=2.0)
    guard.set_model(Model())
    losses = [10.0, 11.0, 9.0, 23.0, 12.0, 11.0, 10.0, None, 10.0, 9.0, 9.0]
    troubles = []
    for loss in losses:
        Model.optimizer.iterations.assign_add(1)
        logs = {"nonfinite": 1.0} if loss is None else {"nonfinite": 0.0, "step_loss": loss}
        guard.on_train_batch_end(0, logs)
        troubles.append(guard.trouble is not None)
    # Step 4: 23 > 2 x max(10, 11, 9) = 22; step 8 was skipped. Each opens trouble that
    # ends after 3 healthy steps in a row.
    assert judged.verdicts == [True, True, True, False, True, True, True, False, True, True, True]
    assert troubles == [False, False, False, True, True, True, False, True, True, True, False]
    assert guard.first_sign == "step 4's loss jumped to 23, over 2 times its recent maximum (11)"
    assert guard.skipped == 1 and guard.failed_at is None


def test_pruning_keeps_the_newest_good_checkpoint(tmp_path):
    checkpointer = _checkpointer(tmp_path / "checkpoints", keep=2)
    checkpointer.save(1)
    checkpointer.judge(True)  # the step after 1 was healthy: 1 is good
    for step in (2, 3, 4):
        checkpointer.save(step, suspect="step 2 was skipped")
    assert _names(tmp_path / "checkpoints") == ["step-00000001", "step-00000003", "step-00000004"]
    state = json.loads((tmp_path / "checkpoints" / "step-00000004" / "state.json").read_text())
    assert state == {"step": 4, "suspect": "step 2 was skipped"}
    moved = checkpointer.set_aside_unhealthy()
    assert [p.name for p in moved] == ["step-00000003.unhealthy", "step-00000004.unhealthy"]
    assert find_checkpoint(tmp_path).name == "step-00000001"


def test_skip_mode_divergence_keeps_the_last_good_checkpoint_and_sets_the_rest_aside(
    tmp_path, capsys, six_steps, steps_run
):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    data, run, good = _six_step_run(six_steps, tmp_path)
    code = _pretrain(
        data, run, "--set", "train.learning_rate=1e6", "--set", "train.on_nonfinite=skip",
        "--set", "train.checkpoint_every=1", "--set", "train.max_nonfinite_skips=3", steps=40,
    )  # fmt: skip
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2
    assert "the newest checkpoint, step-00000006, is the last good one" in message
    assert "now step-N.unhealthy" in message and "raise train.max_nonfinite_skips" in message
    assert "set train.on_nonfinite=skip" not in message  # the flag it already has
    names = _names(run / "checkpoints")
    assert [n for n in names if not n.endswith(".unhealthy")][-1] == "step-00000006"
    assert any(n.endswith(".unhealthy") for n in names)
    assert find_checkpoint(run).name == "step-00000006"  # what resume and export read
    for a, b in zip(good, _weights(load_pretrainer(run)), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_fresh_run_that_diverges_at_once_keeps_no_checkpoint_as_good(tmp_path, capsys, steps_run):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    data = write_packed(tmp_path / "data", n=64, seq=16)
    run = tmp_path / "run"
    code = _pretrain(
        data, run, "--set", "train.learning_rate=1e6", "--set", "train.on_nonfinite=skip",
        "--set", "train.checkpoint_every=1", "--set", "train.max_nonfinite_skips=3", steps=40,
    )  # fmt: skip
    assert code == 2 and "no good checkpoint was written" in capsys.readouterr().err
    assert find_checkpoint(run) is None
    assert all(name.endswith(".unhealthy") for name in _names(run / "checkpoints"))


def test_a_slow_climb_that_never_jumps_stops_the_run_at_four_times_its_lowest_median():
    class Model:
        stop_training = False
        diverged_at = None

        class optimizer:  # noqa: N801 - a stand-in with the attribute the guard reads
            iterations = tf.Variable(0, dtype=tf.int64)

    judged = _Judged()
    model = Model()
    guard = NonfiniteGuard("stop", checkpointer=judged, window=8, spike=2.0, drift=4.0)
    guard.set_model(model)
    # Down to 10 at step 5, then up 30% a step: never twice its recent maximum.
    losses = [40.0, 30.0, 20.0, 12.0, 10.0] + [10.0 * 1.3**k for k in range(1, 30)]
    for loss in losses:
        model.optimizer.iterations.assign_add(1)
        guard.on_train_batch_end(0, {"nonfinite": 0.0, "step_loss": loss})
        if model.stop_training:
            break
    # The median is lowest at step 6: (13 + 20) / 2 = 16.5 over steps 1-6. At step 15 the
    # last 8 (steps 8-15) have median (48.27 + 62.75) / 2 = 55.5 <= 4 x 16.5 = 66; at step
    # 16 (steps 9-16), (62.75 + 81.57) / 2 = 72.16 > 66.
    assert guard.lowest == (16.5, 6) and judged.lowest == 6
    assert guard.failed_at == 16 and model.diverged_at == 16
    assert judged.verdicts[-2:] == [False, ("after", 6)]
    assert False not in judged.verdicts[:-2]  # no step before it jumped
    assert guard.drifted == (
        "the median of its last 8 losses rose to 72.16, over 4 times its lowest (16.5 at step 6)"
    )


def test_the_checkpoint_before_the_climb_outlives_pruning_and_the_rest_are_set_aside(tmp_path):
    checkpointer = _checkpointer(tmp_path / "checkpoints", keep=2)
    checkpointer.save(1)
    checkpointer.judge(True)
    checkpointer.lowest_loss_at(1)  # the loss was lowest after step 1, then rose slowly
    for step in (2, 3, 4, 5):
        checkpointer.save(step)
        checkpointer.judge(True)  # no single step jumped: each is judged healthy
    assert checkpointer.good == 5 and checkpointer.anchor == 1
    names = ["step-00000001", "step-00000004", "step-00000005"]
    assert _names(tmp_path / "checkpoints") == names
    checkpointer.distrust_after(1, "written after the loss rose")
    assert checkpointer.good == 1
    moved = checkpointer.set_aside_unhealthy()
    assert [p.name for p in moved] == ["step-00000004.unhealthy", "step-00000005.unhealthy"]
    assert find_checkpoint(tmp_path).name == "step-00000001"


def test_a_run_whose_loss_climbs_after_a_good_checkpoint_stops_and_keeps_it(
    tmp_path, capsys, six_steps, steps_run
):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    data, run, good = _six_step_run(six_steps, tmp_path)
    code = _pretrain(
        data, run, "--set", "train.learning_rate=100", "--set", "train.checkpoint_every=1",
        "--set", "train.keep_checkpoints=2", steps=40,
    )  # fmt: skip
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2, message
    assert "over 4 times its lowest" in message and "raise train.warmup_steps" in message
    assert "the newest checkpoint, step-00000006, is the last good one" in message
    names = _names(run / "checkpoints")
    assert [n for n in names if not n.endswith(".unhealthy")] == ["step-00000006"]
    assert find_checkpoint(run).name == "step-00000006"
    for a, b in zip(good, _weights(load_pretrainer(run)), strict=True):
        np.testing.assert_array_equal(a, b)
    summary = json.loads((run / "last_run.json").read_text())
    assert summary["status"] == "diverged"


def test_a_run_that_ends_in_trouble_says_so_and_its_export_is_refused(
    tmp_path, capsys, six_steps, steps_run
):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    data, run, _ = _six_step_run(six_steps, tmp_path)
    capsys.readouterr()
    # Two more steps at lr 100, the median rule off: step 8's loss (on step 7's weights)
    # jumps, so the run ends in trouble and its last checkpoint is suspect.
    code = _pretrain(
        data, run, "--set", "train.learning_rate=100", "--set", "train.divergence_factor=0",
        steps=8,
    )  # fmt: skip
    said = capsys.readouterr().err
    assert code == 0
    assert "Note: the run ended in trouble (step 8's loss jumped to " in said
    assert "the last good one is step-00000006." in said
    state = json.loads((run / "checkpoints" / "step-00000008" / "state.json").read_text())
    assert state["suspect"].startswith("step 8's loss jumped to ")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "word"]) + "\n")
    args = ["export", "--checkpoint", str(run), "--format", "reference", "--vocab-file"]
    assert main([*args, str(vocab), "--out", str(tmp_path / "x")]) == 2
    assert "step-00000006) instead, or pass --allow-suspect" in capsys.readouterr().err


def test_export_refuses_a_checkpoint_written_in_trouble_unless_asked(tmp_path, capsys):
    checkpointer = _checkpointer(tmp_path / "run" / "checkpoints")
    checkpointer.save(1)
    checkpointer.save(2, suspect="step 2's loss jumped to 90")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "word"]) + "\n")
    args = ["export", "--checkpoint", str(tmp_path / "run"), "--format", "reference"]
    args += ["--vocab-file", str(vocab), "--out"]
    assert main([*args, str(tmp_path / "refused")]) == 2
    message = capsys.readouterr().err.strip()
    step_1 = tmp_path / "run" / "checkpoints" / "step-00000001"
    assert message.endswith(
        f"step-00000002 was written while its run was in trouble (step 2's loss jumped to 90); "
        f"name an earlier one ({step_1}) instead, or pass --allow-suspect to export it anyway."
    )
    assert not (tmp_path / "refused").exists()
    assert main([*args, str(tmp_path / "one"), "--checkpoint", str(step_1)]) == 0
    assert main([*args, str(tmp_path / "two"), "--allow-suspect"]) == 0
    assert (tmp_path / "two").is_dir()


# 2. Checkpoints without record.json --------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncated data", "edited state", "renamed and edited"])
def test_a_checkpoint_without_a_record_is_read_to_verify_it(tmp_path, damage):
    checkpointer = _checkpointer(tmp_path / "checkpoints")
    for step in (2, 4):  # the optimizer's step is what a checkpoint without a record shows
        checkpointer.model.optimizer.iterations.assign(step)
        newest = checkpointer.save(step)
    for folder in (newest, newest.with_name("step-00000002")):
        (folder / "record.json").unlink()  # as written before records existed
    assert find_checkpoint(tmp_path).name == "step-00000004"  # intact: it still verifies
    if damage == "truncated data":
        data = next(newest.glob("ckpt.data-*"))
        data.write_bytes(data.read_bytes()[: data.stat().st_size - 100])
        expected = "it has no record.json, and its data do not match its index"
    elif damage == "edited state":
        (newest / "state.json").write_text('{"step": 3}')
        expected = "its state.json says step 3 but its name says 4"
    else:
        (newest / "state.json").write_text('{"step": 3}')
        newest = newest.rename(newest.with_name("step-00000003"))
        expected = "its state.json says step 3 where its optimizer is at step 4"
    lines = []
    assert find_checkpoint(tmp_path, log=lines.append).name == "step-00000002"
    assert len(lines) == 1 and expected in lines[0], lines
    assert (tmp_path / "checkpoints" / f"{newest.name}.corrupt").is_dir()
    assert int(load_pretrainer(tmp_path).optimizer.iterations.numpy()) == 2


# 3. A power cut: what a checkpoint reports saved is on disk, and pruning waits for it -------


def test_a_power_cut_loses_no_checkpoint_it_reported_written(tmp_path, monkeypatch):
    checkpointer = _checkpointer(tmp_path / "checkpoints", keep=2)
    power = PowerCut(monkeypatch, tmp_path)
    import electra_tf.pretraining.checkpoint as module

    unsynced_at_pruning = []
    real_remove = module.remove_folder

    def remove(folder):
        unsynced_at_pruning.extend(power.unsynced_files() + power.unsynced_renames())
        real_remove(folder)

    monkeypatch.setattr(module, "remove_folder", remove)
    for step in (2, 4, 6):
        checkpointer.save(step)
        checkpointer.judge(True)
    assert unsynced_at_pruning == []
    lost = power.cut()
    assert power.unsynced_renames() == [] and lost == []
    lines = []
    assert find_checkpoint(tmp_path, log=lines.append).name == "step-00000006" and not lines


def test_a_power_cut_after_a_run_leaves_its_checkpoints_and_summary(
    tmp_path, monkeypatch, steps_run
):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    data = write_packed(tmp_path / "data", n=64, seq=16)
    run = tmp_path / "run"
    power = PowerCut(monkeypatch, run)
    assert _pretrain(data, run) == 0
    lost = power.cut()
    assert all("logs" in p.relative_to(run).parts for p in lost), lost  # TensorBoard only
    assert power.unsynced_renames() == []
    assert find_checkpoint(run).name == "step-00000004"
    assert json.loads((run / "last_run.json").read_text())["step"] == 4
    assert json.loads((run / "config.json").read_text())["train"]["num_steps"] == 4


def test_a_manifest_is_synced_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    power = PowerCut(monkeypatch, tmp_path)
    write_packed(tmp_path / "data", n=8, seq=16)
    lost = [p.name for p in power.cut()]
    assert "manifest.json" not in lost and power.unsynced_renames() == []


# 5. Read-only and full output folders ------------------------------------------------------


def _deny_writes(monkeypatch, folder, code):
    """Writes under `folder` fail with `code`: EROFS at open and mkdir, ENOSPC at the first
    write (the file is created, as on a full disk); TensorFlow's writers fail likewise."""
    folder = os.path.realpath(folder)
    message = os.strerror(code)

    def inside(path):
        return os.path.realpath(os.fspath(path)).startswith(folder)

    real_open, real_mkdir = io.open, os.mkdir

    class Full(io.FileIO):
        def write(self, data):
            raise OSError(code, message)

    def fake_open(path, mode="r", *args, **kwargs):
        if isinstance(path, (str, os.PathLike)) and inside(path) and set(mode) & set("wax+"):
            if code == errno.EROFS:
                raise OSError(code, message, os.fspath(path))
            return Full(os.fspath(path), "w")
        return real_open(path, mode, *args, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if code == errno.EROFS and inside(path):
            if os.path.exists(path):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(path))
            raise OSError(code, message, os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    real_writer = tf.summary.create_file_writer

    def writer(logdir, *args, **kwargs):
        if inside(logdir):
            raise tf.errors.ResourceExhaustedError(None, None, f"{logdir}; {message}")
        return real_writer(logdir, *args, **kwargs)

    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    monkeypatch.setattr(tf.summary, "create_file_writer", writer)


def _fail_saved_model_save(monkeypatch):
    """`tf.saved_model.save` leaves what TensorFlow leaves when a write is refused midway."""

    def save(obj, path, *args, **kwargs):
        os.makedirs(os.path.join(path, "variables"), exist_ok=True)
        open(os.path.join(path, "variables", "variables_temp"), "wb").close()
        raise tf.errors.PermissionDeniedError(None, None, f"{path}/variables; Permission denied")

    monkeypatch.setattr(tf.saved_model, "save", save)


@pytest.mark.parametrize("exists", [True, False], ids=["folder", "new folder"])
@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC])
def test_a_run_into_a_folder_it_cannot_write_gets_one_sentence_and_no_file(
    tmp_path, monkeypatch, capsys, code, exists
):
    data = write_packed(tmp_path / "data", n=32, seq=16)
    run = tmp_path / "out" / "run"
    (tmp_path / "out").mkdir()
    if exists:
        run.mkdir()
    _deny_writes(monkeypatch, tmp_path / "out", code)
    assert _pretrain(data, run, steps=2) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"electra-tf pretrain: Could not write into {run} ({os.strerror(code)}); free space "
        "or choose a writable --output-dir."
    )
    assert "Traceback" not in "\n".join(err)
    # No 0-byte config.json, no probe file, and no folder the run created.
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == (["run"] if exists else [])


@pytest.mark.parametrize("fault", ["read-only", "full", "refused mid-save"])
def test_an_export_it_cannot_write_gets_one_sentence_and_leaves_nothing(
    tmp_path, monkeypatch, fault
):
    from electra_tf.serving.formats import export_model

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "word"]) + "\n")
    model = ElectraPretrainer(tiny_config())
    out = tmp_path / "out"
    out.mkdir()
    if fault == "refused mid-save":
        _fail_saved_model_save(monkeypatch)
        reason = "Permission denied"
    else:
        code = errno.EROFS if fault == "read-only" else errno.ENOSPC
        _deny_writes(monkeypatch, out, code)
        reason = os.strerror(code)
    with pytest.raises(ConfigError) as caught:
        export_model(model, out, "serving", vocab_file=str(vocab))
    assert str(caught.value).startswith(f"Could not write the export into {out} (")
    assert reason in str(caught.value) and str(caught.value).count(". ") == 0
    assert sorted(p.name for p in out.rglob("*")) == []  # no .1.tmp/variables/variables_temp


# 6. Shards of preparations that disagree ---------------------------------------------------


def test_shards_of_two_preparations_that_disagree_are_refused_whatever_is_overridden(
    tmp_path, capsys, steps_run
):
    """`[eager]` (default) runs the pre-training steps eagerly; `[traced]` (slow) is the
    full form, its steps traced."""
    a = write_packed(tmp_path / "a", n=32, seq=16, vocab=64)
    b = write_packed(tmp_path / "b", n=32, seq=16, vocab=80)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]) + "\n")
    expected = (
        f"mix two preparations: {a}/manifest.json has vocabulary_size=64 where "
        f"{b}/manifest.json has vocabulary_size=80; train on shards prepared with one "
        "vocabulary, casing and length."
    )
    for spec, more in (
        (f"{a}/shard-000.tfrecord,{b}/shard-000.tfrecord", ()),
        (f"{tmp_path}/*/shard-*.tfrecord", ()),  # one glob over both folders
        (f"{a}/shard-000.tfrecord,{b}/shard-001.tfrecord",
         ("--vocab-file", str(vocab), "--set", "data.sequence_length=16")),
    ):  # fmt: skip
        assert _pretrain(spec, tmp_path / "run", *more, steps=2) == 2
        assert expected in capsys.readouterr().err
    bare = write_packed(tmp_path / "bare", n=32, seq=16, manifest=False)
    assert _pretrain(f"{a}/shard-000.tfrecord,{bare}/shard-000.tfrecord", tmp_path / "r", steps=2)
    assert f"mix shards of {a} (prepared, with a manifest.json) and of {bare}" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "run").exists() and not (tmp_path / "r").exists()
    same = write_packed(tmp_path / "same", n=32, seq=16, vocab=64, seed=1)  # agrees with a
    assert _pretrain(f"{a}/shard-000.tfrecord,{same}/shard-001.tfrecord", tmp_path / "ok") == 0


# 7. mixed_float16: a loss scale pinned at its floor, or a non-finite moment, is divergence -


def _fp16_steps(checkpointer, steps, batch):
    model = checkpointer.model
    flags = []
    for _ in range(steps):
        logs = model.train_step(batch)
        flags.append(float(logs["nonfinite"]))
    return flags


def test_mixed_float16_divergence_is_counted_at_the_loss_scale_floor(tmp_path):
    from helpers import structured_dataset

    checkpointer = _checkpointer(tmp_path / "checkpoints", precision="mixed_float16")
    model = checkpointer.model
    batch = next(iter(structured_dataset()))
    scale = model.optimizer.dynamic_scale
    assert _fp16_steps(checkpointer, 2, batch) == [0.0, 0.0]  # healthy
    weight = model.discriminator.encoder.embeddings.token_embedding.embeddings
    weight.assign(np.full(weight.shape, np.nan, np.float32))  # every step is now non-finite
    scale.assign(4.0)
    # 4 -> 2 -> 1 (calibration, not divergence), then non-finite at the floor: divergence.
    assert _fp16_steps(checkpointer, 4, batch) == [0.0, 0.0, 1.0, 1.0]
    assert float(scale.numpy()) == MIN_LOSS_SCALE  # pinned, not halved towards 0


def test_mixed_float16_non_finite_moments_count_as_divergence_and_are_never_saved(tmp_path):
    from helpers import structured_dataset

    from electra_tf.pretraining.checkpoint import CheckpointError

    checkpointer = _checkpointer(tmp_path / "checkpoints", precision="mixed_float16")
    model = checkpointer.model
    batch = next(iter(structured_dataset()))
    assert _fp16_steps(checkpointer, 1, batch) == [0.0]
    moment = model.optimizer.inner_optimizer._momentums[0]
    moment.assign(np.full(moment.shape, np.inf, np.float32))
    with pytest.raises(CheckpointError, match=f"optimizer variable {moment.path} is not finite"):
        checkpointer.save(1)
    assert _names(tmp_path / "checkpoints") == []
    assert _fp16_steps(checkpointer, 1, batch) == [1.0]


# Issue 56 item 10: one folder swap everywhere, undone at the next start after a kill -9.


@pytest.mark.parametrize("fine_tuning", [pytest.param("traced", marks=pytest.mark.slow), "eager"])
def test_a_publish_killed_between_its_renames_is_put_back_by_predict_and_export(
    tmp_path, fine_tuning
):
    """`[eager]` (default) fine-tunes the run eagerly (predict and export as ever);
    `[traced]` (slow) is the full form, its fine-tuning traced."""
    from helpers import kill_between_renames, tiny_finetuned_run

    from electra_tf.finetuning.predict import open_predictor

    def old_copy(final):
        return final.with_name(f".{final.name}.old")

    with functions_run_eagerly() if fine_tuning == "eager" else contextlib.nullcontext():
        run = tiny_finetuned_run(tmp_path / "run")
    out = tmp_path / "out"
    texts = ["the food was good", "bad slow food", "quick"]
    want = open_predictor(run)(texts)
    kill_between_renames(run / "model")  # a finetune resume republishing the kept model
    assert open_predictor(run)(texts) == want  # predict puts it back, then reads it
    assert not old_copy(run / "model").exists()
    kill_between_renames(run / "model")
    assert main(["export", "--checkpoint", str(run), "--out", str(out)]) == 0  # put back too
    version = out / "food" / "1"
    assert (run / "model" / "finetuned.json").is_file() and version.is_dir()
    kill_between_renames(version)  # a second export of the same version, killed
    rows = open_predictor(out)(texts)  # predict on the export's base folder puts it back
    assert [r["label"] for r in rows] == [r["label"] for r in want]
    assert version.is_dir() and not old_copy(version).exists()
