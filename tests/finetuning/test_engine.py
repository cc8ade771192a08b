"""The engine: the best epoch on dev is kept, patience stops, a killed run resumes exactly."""

import json
import re

import keras
import numpy as np
import pytest
from helpers import CHILD_PYTHON, scratch_init, scratch_init_one_layer, write_lines

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.finetuning import engine
from electra_tf.finetuning.best_weights import read_best
from electra_tf.finetuning.engine import EpochSelection
from electra_tf.finetuning.user_task import finetune_files
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.tasks.model_folder import load_finetuned

WORDS = ["good", "great", "fine", "bad", "awful", "poor", "the", "movie", "was", "plot", "and"]


def _files(tmp_path, n=120, seed=0):
    rng = np.random.default_rng(seed)
    lines = ["text,label"]
    for _ in range(n):
        positive = rng.random() < 0.5
        words = list(rng.choice(WORDS[6:], size=rng.integers(1, 6)))
        words.append(str(rng.choice(WORDS[:3] if positive else WORDS[3:6])))
        rng.shuffle(words)
        lines.append(f"{' '.join(words)},{'pos' if positive else 'neg'}")
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + WORDS, tmp_path / "vocab.txt")
    train = write_lines(tmp_path / "train.csv", lines[: n * 3 // 4 + 1])
    dev = write_lines(tmp_path / "dev.csv", [lines[0], *lines[n * 3 // 4 + 1 :]])
    return vocab, train, dev


SETTINGS = ("learning_rate=1e-2", "layerwise_decay=1.0", "batch_size=16", "max_seq_length=16")


def _run(tmp_path, name, vocab, train, dev, *extra, progress=None, layers=1):
    """Fine-tunes the toy files into tmp_path/name from a scratch encoder of `layers` (1 or
    2) layers; returns the report."""
    import electra_tf.finetuning.user_task as user_task

    make_init = scratch_init_one_layer if layers == 1 else scratch_init
    init = make_init(len(SPECIAL_TOKENS) + len(WORDS), vocab)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        return finetune_files(
            "scratch", train=train, dev=dev, overrides=(*SETTINGS, *extra),
            output_dir=tmp_path / name, progress=progress,
        )  # fmt: skip
    finally:
        user_task.load_initialization = original


class Killed(Exception):
    """Stands for kill -9 right after a checkpoint was published."""


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory):
    """The toy files' uninterrupted run (one layer, 3 epochs, 2 seeds), made once for the
    tests that kill and resume runs of the same request: (its folder, its report)."""
    workdir = tmp_path_factory.mktemp("whole")
    vocab, train, dev = _files(workdir)
    return workdir / "whole", _run(workdir, "whole", vocab, train, dev, "epochs=3", "seeds=2")


def test_a_killed_run_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, whole_run):
    vocab, train, dev = _files(tmp_path)
    whole_dir, whole = whole_run
    write_epoch = EpochSelection._write_epoch

    def write_then_die(self, epoch):
        write_epoch(self, epoch)
        self.wait_for_checkpoint()  # published
        if epoch == 2 and "seed-2" in str(self.folder):
            (self.folder / ".epoch-0003.tmp").mkdir()  # a scratch folder a kill leaves
            raise Killed

    monkeypatch.setattr(EpochSelection, "_write_epoch", write_then_die)
    with pytest.raises(Killed):
        _run(tmp_path, "killed", vocab, train, dev, "epochs=3", "seeds=2")
    seed_2 = tmp_path / "killed" / "seeds" / "seed-2"
    assert (seed_2 / "epoch-0002" / "record.json").exists()
    assert not (tmp_path / "killed" / "results.json").exists()
    monkeypatch.setattr(EpochSelection, "_write_epoch", write_epoch)
    lines = []
    resumed = _run(
        tmp_path, "killed", vocab, train, dev, "epochs=3", "seeds=2", progress=lines.append
    )
    assert any("resuming after epoch 2" in line for line in lines)
    assert [r["history"] for r in resumed["runs"]] == [r["history"] for r in whole["runs"]]
    assert resumed["kept"] == whole["kept"]
    a, _ = load_finetuned(whole_dir)
    b, _ = load_finetuned(tmp_path / "killed")
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert not list(seed_2.glob("epoch-*")) and not list(seed_2.glob(".epoch-*"))
    # The kept model is the best seed's best epoch on dev, and says so.
    best = max(whole["runs"], key=lambda r: (r["dev"]["macro_f1"], -r["seed"]))
    info = json.loads((whole_dir / "model" / "finetuned.json").read_text())
    assert (info["seed"], info["epoch"]) == (best["seed"], best["best_epoch"])
    assert (
        info["labels"] == ["neg", "pos"] and "best dev macro_f1 of 2 seed(s)" in info["selected_by"]
    )
    assert info["metrics"]["dev"] == best["dev"]
    rows = [json.loads(line) for line in (whole_dir / "predictions" / "dev.jsonl").open()]
    assert len(rows) == 30 and {"text", "label", "probabilities", "gold"} <= set(rows[0])
    right = np.mean([row["label"] == row["gold"] for row in rows])
    assert right == pytest.approx(best["dev"]["accuracy"])


def test_a_run_killed_after_its_last_epoch_goes_straight_to_the_scores(
    tmp_path, monkeypatch, whole_run
):
    """Killed once seed 2's last epoch has written its best weights and trained.json (no
    resume checkpoint for the last epoch), the rerun trains nothing more: it reads the
    history and best weights and equals the uninterrupted run, then deletes the files."""
    vocab, train, dev = _files(tmp_path)
    whole_dir, whole = whole_run
    write_last = EpochSelection._write_last

    def write_then_die(self):
        write_last(self)
        if "seed-2" in str(self.folder):
            raise Killed

    monkeypatch.setattr(EpochSelection, "_write_last", write_then_die)
    with pytest.raises(Killed):
        _run(tmp_path, "killed", vocab, train, dev, "epochs=3", "seeds=2")
    seed_2 = tmp_path / "killed" / "seeds" / "seed-2"
    trained = engine.read_json(seed_2 / engine.TRAINED)
    assert [e["epoch"] for e in trained["history"]] == [1, 2, 3]
    assert not (seed_2 / "epoch-0003").exists() and not (seed_2 / "result.json").exists()
    monkeypatch.setattr(EpochSelection, "_write_last", write_last)
    lines = []
    resumed = _run(
        tmp_path, "killed", vocab, train, dev, "epochs=3", "seeds=2", progress=lines.append
    )
    assert any("resuming after the last epoch" in line for line in lines), lines
    assert not any(re.search(r"epoch \d+: loss", line) for line in lines), lines  # none trained
    assert [r["history"] for r in resumed["runs"]] == [r["history"] for r in whole["runs"]]
    assert [r["dev"] for r in resumed["runs"]] == [r["dev"] for r in whole["runs"]]
    assert resumed["kept"] == whole["kept"]
    a, _ = load_finetuned(whole_dir)
    b, _ = load_finetuned(tmp_path / "killed")
    for x, y in zip(a.weights, b.weights, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert not (seed_2 / engine.TRAINED).exists() and not list(seed_2.glob("epoch-*"))


def test_trained_json_refused_by_a_full_disk_stops_in_one_sentence_and_the_rerun_ends_the_same(
    tmp_path, monkeypatch, steps_run
):
    """The last epoch's `trained.json` write fails (no space): one sentence naming the file
    and what to do; the best weights and epoch 1's checkpoint stay; the rerun trains the last
    epoch again and ends where an uninterrupted run does. `[eager]` (default) runs the
    fine-tuning steps eagerly, `[traced]` (slow) is the full form."""
    vocab, train, dev = _files(tmp_path, n=40)
    whole = _run(tmp_path, "whole", vocab, train, dev, "epochs=2")
    write_atomic = engine.write_atomic

    def no_space(path, data):
        if path.name == engine.TRAINED:
            raise OSError(28, "No space left on device", str(path))
        return write_atomic(path, data)

    monkeypatch.setattr(engine, "write_atomic", no_space)
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, "run", vocab, train, dev, "epochs=2")
    seed = tmp_path / "run" / "seeds" / "seed-1"
    assert str(caught.value) == (
        f"Could not write {seed / engine.TRAINED} (No space left on device); free space or "
        "choose a writable --output-dir, then rerun: it resumes from the newest epoch "
        "checkpoint."
    )
    assert (seed / "epoch-0001" / "record.json").exists() and (seed / "best.json").exists()
    assert not (seed / engine.TRAINED).exists()
    monkeypatch.setattr(engine, "write_atomic", write_atomic)
    lines = []
    report = _run(tmp_path, "run", vocab, train, dev, "epochs=2", progress=lines.append)
    assert any("resuming after epoch 1" in line for line in lines), lines
    assert [r["history"] for r in report["runs"]] == [r["history"] for r in whole["runs"]]
    assert report["kept"] == whole["kept"]


def test_an_unreadable_trained_json_is_told_and_the_last_epoch_trained_again(
    tmp_path, monkeypatch, steps_run
):
    """`trained.json` cut short (as a failing disk could leave it): the rerun says so in one
    line, resumes from the newest epoch checkpoint and ends as the uninterrupted run.
    `[eager]` (default) runs the fine-tuning steps eagerly, `[traced]` (slow) is the full
    form."""
    vocab, train, dev = _files(tmp_path, n=40)
    whole = _run(tmp_path, "whole", vocab, train, dev, "epochs=2")
    write_last = EpochSelection._write_last

    def write_then_die(self):
        write_last(self)
        raise Killed

    monkeypatch.setattr(EpochSelection, "_write_last", write_then_die)
    with pytest.raises(Killed):
        _run(tmp_path, "run", vocab, train, dev, "epochs=2")
    monkeypatch.setattr(EpochSelection, "_write_last", write_last)
    path = tmp_path / "run" / "seeds" / "seed-1" / engine.TRAINED
    path.write_text(path.read_text()[:-9])
    lines = []
    report = _run(tmp_path, "run", vocab, train, dev, "epochs=2", progress=lines.append)
    told = f"{path} is not usable; resuming from the newest epoch checkpoint"
    assert any(told in line for line in lines), lines
    assert any("resuming after epoch 1" in line for line in lines), lines
    assert [r["history"] for r in report["runs"]] == [r["history"] for r in whole["runs"]]
    assert report["kept"] == whole["kept"] and not path.exists()


def test_another_request_into_the_same_folder_is_refused(tmp_path, steps_run):
    """A finished run's folder refuses another request. `[eager]` (default) runs the
    fine-tuning steps eagerly, `[traced]` (slow) is the full form."""
    vocab, train, dev = _files(tmp_path, n=40)
    _run(tmp_path, "run", vocab, train, dev, "epochs=1")
    with pytest.raises(
        ConfigError, match=r"holds a fine-tuning run of another request \(its config"
    ):
        _run(tmp_path, "run", vocab, train, dev, "epochs=2")


def test_a_run_recorded_before_new_settings_existed_still_resumes(tmp_path, steps_run):
    """A run folder written by an older version (its request lacks settings and columns
    added since) resumes when they are at their defaults, and is refused when not. `[eager]`
    (default) runs the fine-tuning steps eagerly, `[traced]` (slow) is the full form."""
    import json

    vocab, train, dev = _files(tmp_path, n=40)
    _run(tmp_path, "run", vocab, train, dev, "epochs=1")
    path = tmp_path / "run" / "request.json"
    request = json.loads(path.read_text())
    del request["config"]["n_best"], request["columns"]["question"]
    request["digest"] = "from-an-older-version"
    path.write_text(json.dumps(request))
    _run(tmp_path, "run", vocab, train, dev, "epochs=1")  # resumes: finished, nothing to do
    with pytest.raises(ConfigError, match=r"another request \(its config differ"):
        _run(tmp_path, "run", vocab, train, dev, "epochs=1", "n_best=5")


def test_rows_longer_than_the_maximum_length_are_counted_per_split(tmp_path, steps_run):
    """Cut rows are counted per split and told. `[eager]` (default) runs the fine-tuning
    steps eagerly, `[traced]` (slow) is the full form."""
    vocab, train, dev = _files(tmp_path, n=80)
    long = ["the movie was good and the plot was fine,pos", "the plot and the movie was bad,neg"]
    train.write_text(train.read_text() + "\n".join(long) + "\n")
    lines = []
    report = _run(tmp_path, "run", vocab, train, dev, "epochs=1", "max_seq_length=8",
                  progress=lines.append)  # fmt: skip

    def expected(path):  # one piece per word here; [CLS] and [SEP] make two more
        rows = path.read_text().splitlines()[1:]
        return sum(len(row.split(",")[0].split()) + 2 > 8 for row in rows)

    assert report["cut_rows"] == {"train": expected(train), "dev": expected(dev)}
    assert report["cut_rows"]["train"] > 0
    assert any("longer than max_seq_length 8 were cut" in line for line in lines)


class _ScriptedJob:
    main_metric, selection = "accuracy", "dev"

    def __init__(self, scores):
        self.scores = iter(scores)

    def score(self, model, split):
        return {"accuracy": next(self.scores)}


def test_the_best_epoch_is_kept_and_patience_stops_the_run(tmp_path):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((8, 3), np.float32), np.zeros((8, 1), np.float32)
    state = {"history": [], "best": None, "stopped": False}
    weights = []

    class Keep(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            weights.append([w.numpy().copy() for w in self.model.weights])

    selection = EpochSelection(
        _ScriptedJob([0.5, 0.7, 0.6, 0.65, 0.9]), tmp_path, state, patience=2
    )
    history = model.fit(x, y, epochs=5, verbose=0, callbacks=[Keep(), selection])
    assert len(history.history["loss"]) == 4  # epochs 3 and 4 did not beat epoch 2
    assert state["best"]["epoch"] == 2 and state["stopped"]
    assert selection.best_epoch == 2
    for kept, saved in zip(selection.best_weights, weights[1], strict=True):
        np.testing.assert_array_equal(kept, saved)
    # The last epoch (4, patience) left no resume checkpoint: the model, best.weights.npz
    # and best.json hold epoch 2, trained.json the history; the best epoch's checkpoint and
    # the newest one stay until the seed's result is out.
    assert [p.name for p in sorted(tmp_path.glob("epoch-*"))] == ["epoch-0002", "epoch-0003"]
    assert engine.read_json(tmp_path / "best.json")["epoch"] == 2
    assert engine.read_json(tmp_path / engine.TRAINED) == json.loads(json.dumps(state))
    for kept, saved in zip(model.weights, weights[1], strict=True):
        np.testing.assert_array_equal(kept.numpy(), saved)
    model.set_weights(weights[3])
    read_best(model, tmp_path / "best.weights.npz")
    for kept, saved in zip(model.weights, weights[1], strict=True):
        np.testing.assert_array_equal(kept.numpy(), saved)
    # A seed folder of an older version holds Keras's best.weights.h5 (the optimizer's
    # variables in it too): it still counts as written, and is read.
    (tmp_path / "best.weights.npz").rename(tmp_path / "moved.npz")
    model.save_weights(tmp_path / "best.weights.h5")
    model.set_weights(weights[3])
    engine._best_weights(model, tmp_path, state["best"], None)
    for kept, saved in zip(model.weights, weights[1], strict=True):
        np.testing.assert_array_equal(kept.numpy(), saved)
    assert not (tmp_path / "best.weights.npz").exists()  # read, not written again
    # Writing this version's file removes the older one, which would be stale.
    engine.write_best(model, tmp_path, state["best"])
    assert not (tmp_path / "best.weights.h5").exists()
    (tmp_path / "best.weights.npz").unlink()
    (tmp_path / "moved.npz").rename(tmp_path / "best.weights.npz")
    # A resumed seed whose best weights are not out reads them from the best epoch's
    # checkpoint.
    (tmp_path / "best.json").unlink()
    model.set_weights(weights[3])
    engine._best_weights(model, tmp_path, state["best"], None)
    for kept, saved in zip(model.weights, weights[1], strict=True):
        np.testing.assert_array_equal(kept.numpy(), saved)
    assert engine.read_json(tmp_path / "best.json")["epoch"] == 2
    assert engine.better(0.5, None) and not engine.better(float("nan"), None)
    assert engine.better(0.2, 0.3, lower_is_better=True)


def test_a_corrupt_epoch_checkpoint_is_moved_aside_and_the_seed_starts_over(tmp_path, steps_run):
    """A truncated epoch checkpoint is set aside and its seed trained again; `[eager]`
    (default) runs the fine-tuning steps eagerly, `[traced]` (slow) is the full form."""
    vocab, train, dev = _files(tmp_path, n=40)
    write_epoch = EpochSelection._write_epoch
    try:

        def die(self, epoch):
            write_epoch(self, epoch)
            self.wait_for_checkpoint()
            raise Killed

        EpochSelection._write_epoch = die
        with pytest.raises(Killed):
            _run(tmp_path, "run", vocab, train, dev, "epochs=2")
    finally:
        EpochSelection._write_epoch = write_epoch
    folder = tmp_path / "run" / "seeds" / "seed-1" / "epoch-0001"
    data = next(folder.glob("ckpt.data-*"))
    data.write_bytes(data.read_bytes()[:-7])
    lines = []
    report = _run(tmp_path, "run", vocab, train, dev, "epochs=2", progress=lines.append)
    assert any("is not usable" in line and "epoch-0001.corrupt" in line for line in lines)
    assert folder.with_name("epoch-0001.corrupt").is_dir()
    assert report["runs"][0]["epochs_run"] == 2
    assert FinetuneConfig().patience == 0


def test_the_best_weights_are_set_and_written_once_when_the_last_epoch_ends(tmp_path, monkeypatch):
    vocab, train, dev = _files(tmp_path, n=40)
    calls, best_weights = [], engine._best_weights

    def counted(model, folder, best, selection):
        calls.append(best["epoch"])
        return best_weights(model, folder, best, selection)

    monkeypatch.setattr(engine, "_best_weights", counted)
    report = _run(tmp_path, "run", vocab, train, dev, "epochs=2")
    assert calls == [report["runs"][0]["best_epoch"]]
    kept, _ = load_finetuned(tmp_path / "run")  # the model the run kept, and its best epoch's
    best, _ = load_finetuned(tmp_path / "run")
    best.set_weights([np.zeros_like(w) for w in best.get_weights()])
    written = tmp_path / "run" / "seeds" / "seed-1" / "best.weights.npz"
    read_best(best, written)
    for got, want in zip(kept.get_weights(), best.get_weights(), strict=True):
        np.testing.assert_array_equal(got, want)
    # The model's weights alone: no optimizer state (Adam's moments were 2/3 of the file).
    with np.load(written) as data:
        assert set(json.loads(str(data["paths"]))) == {"trainable", "non_trainable"}
        variables = len(kept.trainable_variables) + len(kept.non_trainable_variables)
        assert len(data.files) == variables + 1  # and the paths


def _driver(tmp_path, run, point="none", seed=0, epoch=0, layers=2):
    import os
    import subprocess
    from pathlib import Path

    driver = Path(__file__).with_name("kill_driver.py")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    args = [*CHILD_PYTHON, str(driver), str(tmp_path), run, point, str(seed), str(epoch)]
    args.append(str(layers))
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)


def _finished(tmp_path, run):
    results = json.loads((tmp_path / run / "results.json").read_text())
    model, _ = load_finetuned(tmp_path / run)
    scores = [{k: r[k] for k in ("seed", "best_epoch", "history", "dev")} for r in results["runs"]]
    return results["kept"], scores, [w.numpy() for w in model.weights]


def test_kill_9_of_the_kept_seed_resumes_to_the_uninterrupted_run(tmp_path, whole_run):
    """A real SIGKILL of the seed that ends up kept, while its best epoch's files are written
    (its checkpoint's, or for the last epoch, which has none, its `trained.json`, under a
    scratch name, not yet published: the point only a real kill makes), in ONE fresh process
    (a one-layer encoder), resumed in this process; it equals the uninterrupted run
    (`whole_run`, made in this process) in weights, best epoch and every score. A kill after
    the checkpoint is published is test_a_killed_run_resumes_to_the_uninterrupted_result
    (in this process). The chain of three kills (mid-epoch, checkpoint, before the best weights) is
    test_kill_9_of_the_kept_seed_resumes_to_the_uninterrupted_run_at_three_points; the full
    form, with one process per run and per resume and two layers, is
    test_kill_9_of_the_kept_seed_resumes_in_its_own_process_to_the_uninterrupted_run."""
    _kill_chain(tmp_path, whole_run, ("checkpoint",))


@pytest.mark.slow
def test_kill_9_of_the_kept_seed_resumes_to_the_uninterrupted_run_at_three_points(
    tmp_path, whole_run
):
    """A real SIGKILL of the seed that ends up kept, mid-epoch, while its epoch's files are
    written, and as its best weights start to be written; each killed run is resumed
    first thing by the next fresh process (which then makes the next kill: 3 processes in a
    chain; a one-layer encoder), the last one in this process; each equals the uninterrupted
    one (`whole_run`, made in this process) in weights, best epoch and every score. The
    full form, with one process per run and per resume and two layers, is
    test_kill_9_of_the_kept_seed_resumes_in_its_own_process_to_the_uninterrupted_run."""
    _kill_chain(tmp_path, whole_run, ("mid-epoch", "checkpoint", "before-best"))


def _kill_chain(tmp_path, whole_run, points):
    """Kills at `points` in a chain of fresh processes (each resuming the run killed before
    it first), the last killed run resumed here; all equal `whole_run`."""
    vocab, train, dev = _files(tmp_path)
    kept, scores, weights = _finished(whole_run[0].parent, "whole")
    seed = kept["seed"]
    epoch = next(s["best_epoch"] for s in scores if s["seed"] == seed)
    runs = {point: f"killed-{point}" for point in points}
    chain = [None, *runs.values()]
    for i, point in enumerate(points):  # the last kill's resume first
        names = ",".join(run for run in (chain[i], runs[point]) if run)
        killed = _driver(tmp_path, names, point, seed, epoch, layers=1)
        assert killed.returncode == -9, (point, killed.stderr[-2000:])
        assert not (tmp_path / runs[point] / "results.json").exists()
        _left_by_the_kill(tmp_path / runs[point] / "seeds" / f"seed-{seed}", point, epoch)
    _run(tmp_path, runs[points[-1]], vocab, train, dev, "epochs=3", "seeds=2")
    for point, run in runs.items():
        got_kept, got_scores, got_weights = _finished(tmp_path, run)
        assert (got_kept, got_scores) == (kept, scores), point
        for x, y in zip(weights, got_weights, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=point)


@pytest.mark.slow
def test_kill_9_of_the_kept_seed_resumes_in_its_own_process_to_the_uninterrupted_run(tmp_path):
    """The same, each killed run resumed by a fresh process of its own."""
    _kill_and_resume(tmp_path, together=False)


def _kill_and_resume(tmp_path, together):
    """Whole, then each kill in a process of its own; resumed together or one by one."""
    _files(tmp_path)
    done = _driver(tmp_path, "whole")
    assert done.returncode == 0, done.stderr[-2000:]
    kept, scores, weights = _finished(tmp_path, "whole")
    seed = kept["seed"]
    # Kill in the kept seed's best epoch, so the kill lands where the kept model is made.
    epoch = next(s["best_epoch"] for s in scores if s["seed"] == seed)
    runs = {}
    for point in ("mid-epoch", "checkpoint", "before-best"):
        run = runs[point] = f"killed-{point}"
        killed = _driver(tmp_path, run, point, seed, epoch)
        assert killed.returncode == -9, (point, killed.stderr[-2000:])
        assert not (tmp_path / run / "results.json").exists()
        _left_by_the_kill(tmp_path / run / "seeds" / f"seed-{seed}", point, epoch)
        if not together:
            resumed = _driver(tmp_path, run)
            assert resumed.returncode == 0, (point, resumed.stderr[-2000:])
    if together:
        resumed = _driver(tmp_path, ",".join(runs.values()))
        assert resumed.returncode == 0, resumed.stderr[-2000:]
    for point, run in runs.items():
        got_kept, got_scores, got_weights = _finished(tmp_path, run)
        assert (got_kept, got_scores) == (kept, scores), point
        for x, y in zip(weights, got_weights, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=point)


def _left_by_the_kill(folder, point, epoch):
    """What a kill at `point` in `epoch` leaves in the seed's folder (3 epochs; the last
    writes no resume checkpoint)."""
    if point == "before-best":  # the newest checkpoint; the best epoch's weights not out
        assert (folder / f"epoch-{min(epoch, 2):04d}" / "record.json").exists()
        assert read_best_epoch(folder) != epoch
    if point == "checkpoint":  # the epoch's files were written, not published
        assert not (folder / f"epoch-{epoch:04d}").exists()
        if epoch == 3:  # the last epoch: the best weights out, the history in its scratch
            assert read_best_epoch(folder) == epoch
            assert (folder / f".{engine.TRAINED}.tmp").exists()
        assert not (folder / engine.TRAINED).exists()


def read_best_epoch(folder):
    best = engine.read_json(folder / "best.json")
    return None if best is None else best["epoch"]


def test_outputs_are_computed_once_per_set_of_weights():
    """`Kind.remembered`: the kept model's predictions reuse its scoring pass, and only for
    the very same weights (one changed float makes it compute again)."""
    from types import SimpleNamespace

    from electra_tf.tasks.kind import Kind, weights_digest

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    kind = Kind(SimpleNamespace(metrics=("accuracy",)), {"dev": [], "test": []})
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert kind.remembered(model, "dev", compute) == 1
    assert kind.remembered(model, "dev", compute) == 1  # the same weights: remembered
    assert kind.remembered(model, "test", compute) == 2  # another split
    kept = model.get_weights()
    changed = [w.copy() for w in kept]
    changed[1][0] = np.nextafter(changed[1][0], np.float32(1))  # one bias, one ulp
    model.set_weights(changed)
    assert kind.remembered(model, "dev", compute) == 3
    model.set_weights(kept)
    assert kind.remembered(model, "dev", compute) == 1  # back to the first weights
    twin = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    twin.set_weights(kept)
    assert weights_digest(twin) == weights_digest(model)
    for _ in range(20):  # bounded: the oldest sets are forgotten
        model.set_weights([w + np.float32(len(calls)) for w in kept])
        kind.remembered(model, "dev", compute)
    model.set_weights(kept)
    assert kind.remembered(model, "dev", compute) == len(calls)  # computed again


@pytest.mark.parametrize("collapsed", [True, False])
def test_an_epoch_whose_dev_predictions_are_all_one_class_is_told_in_the_log(
    tmp_path, monkeypatch, collapsed, steps_run
):
    """An all-one-class epoch is told once per epoch, a mixed one never. `[eager]` (default)
    runs the fine-tuning steps eagerly, `[traced]` (slow) is the full form."""
    from electra_tf.tasks.kinds.classification import Classification

    def one_class(cls, outputs):  # all "neg" (class 0), or both classes in turn
        rows = len(np.asarray(outputs))
        return np.zeros(rows, np.int64) if collapsed else np.arange(rows) % 2

    monkeypatch.setattr(Classification, "metric_inputs", classmethod(one_class))
    vocab, train, dev = _files(tmp_path, n=40)
    lines = []
    _run(tmp_path, "run", vocab, train, dev, "epochs=2", progress=lines.append)
    warned = [line for line in lines if "every dev prediction is 'neg'" in line]
    (result,) = (tmp_path / "run" / "seeds").glob("seed-*/result.json")
    history = json.loads(result.read_text())
    if not collapsed:
        assert warned == [] and not any("collapsed" in e for e in history["history"])
        return
    share = sum(line.endswith(",neg") for line in dev.read_text().splitlines()) / 10
    assert len(warned) == 2 and warned[0].endswith(
        f"epoch 1: every dev prediction is 'neg' while only {share:.0%} of dev rows are 'neg': "
        "the model has not learned to tell its inputs apart yet; try more epochs than 2 "
        "(--set epochs=...) or a higher learning rate than 0.01 (--set learning_rate=...)."
    )
    assert [e["collapsed"] for e in history["history"]] == [True, True]
    assert "collapsed" not in history["dev"]


def test_each_kind_tells_a_collapse_to_one_value_only_where_the_labels_are_not():
    from electra_tf.tasks.kind import no_answer_collapse
    from electra_tf.tasks.kinds.classification import Classification
    from electra_tf.tasks.kinds.multi_label import MultiLabel
    from electra_tf.tasks.kinds.tagging import _tag_collapse

    labels = ["neg", "pos"]
    gold = np.array([0, 0, 0, 1])
    assert Classification.collapsed("dev", gold, np.ones(4), labels) == (
        "every dev prediction is 'pos' while only 25% of dev rows are 'pos'"
    )
    assert Classification.collapsed("dev", gold, np.array([0, 1, 0, 0]), labels) is None
    assert Classification.collapsed("dev", np.zeros(4), np.zeros(4), labels) is None
    rows = np.array([[1, 0], [1, 1], [1, 0]], np.float32)
    assert MultiLabel.collapsed("dev", rows, np.array([[1, 0]] * 3), ["a", "b"]) == (
        "every dev prediction is the label set {a} while only 67% of dev rows have it"
    )
    assert MultiLabel.collapsed("dev", rows, rows, ["a", "b"]) is None
    tags = [["B-PER", "I-PER", "O", "O"], ["O"] * 4]
    assert _tag_collapse("dev", tags, [["O"] * 4] * 2) == (
        "every dev word is predicted 'O' while 25% of dev words are tagged"
    )
    assert _tag_collapse("dev", tags, [["B-PER", "O", "O", "O"], ["O"] * 4]) is None
    assert _tag_collapse("dev", [["O"] * 4], [["O"] * 4]) is None
    references = {"a": ["Rome"], "b": [], "c": [], "d": []}
    assert no_answer_collapse("dev", dict.fromkeys(references, ""), references) == (
        "every dev answer is empty (no answer) while 25% of dev questions have one"
    )
    assert (
        no_answer_collapse("dev", {**dict.fromkeys(references, ""), "a": "Rome"}, references)
        is None
    )
    assert no_answer_collapse("dev", dict.fromkeys("bcd", ""), {k: [] for k in "bcd"}) is None


def test_tagging_scores_note_an_all_o_dev_and_forget_it_once_it_tags():
    from types import SimpleNamespace

    from electra_tf.datasets.conll import TaggedSentence
    from electra_tf.tasks.kinds.tagging import Tagging

    dev = [TaggedSentence(("ada", "met", "bob"), ("B-PER", "O", "B-PER")),
           TaggedSentence(("in", "rome"), ("O", "O"))]  # fmt: skip

    class Tagger:  # stands for the model: predicted tags, and weights to key them by
        def __init__(self, tags, value):
            self.tags, self.weights = tags, [keras.Variable(np.full(1, value, np.float32))]

        def predict_labels(self, words, batch_size):
            return [{"tags": tags, "words_cut": 0} for tags in self.tags]

    job = Tagging(SimpleNamespace(metrics=Tagging.metrics, name="ner"), {"dev": dev})
    assert job.score(Tagger([["O"] * 3, ["O"] * 2], 0.0), "dev")["f1"] == 0.0
    assert (
        job.collapse("dev") == "every dev word is predicted 'O' while 40% of dev words are tagged"
    )
    job.score(Tagger([["B-PER", "O", "O"], ["O"] * 2], 1.0), "dev")
    assert job.collapse("dev") is None


def test_classification_keeps_the_epoch_of_best_dev_macro_f1_on_your_files(tmp_path):
    """Your classification files keep the epoch of best dev macro F1 (issue 55's 5%-positive
    study: three epochs at dev accuracy 0.95, the first predicting only the majority
    class, and the accuracy tie kept it); a named task keeps its first metric."""
    from electra_tf.datasets.tasks import Task, get_task
    from electra_tf.tasks.kinds.classification import Classification

    mine = Task("mine", "classification", ("negative", "positive"), ("text", None, "label"),
                metrics=Classification.metrics)  # fmt: skip
    assert Classification(mine, {}).main_metric == "macro_f1"
    assert Classification(get_task("sst2"), {}).main_metric == "accuracy"

    class Imbalanced(_ScriptedJob):
        main_metric = Classification(mine, {}).main_metric

        def score(self, model, split):
            return dict(zip(("accuracy", "macro_f1"), next(self.scores), strict=True))

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    state = {"history": [], "best": None, "stopped": False}
    scripted = Imbalanced([(0.95, 0.487), (0.95, 0.487), (0.95, 0.649)])
    selection = EpochSelection(scripted, tmp_path, state, patience=0)
    model.fit(np.ones((4, 3)), np.zeros((4, 1)), epochs=3, verbose=0, callbacks=[selection])
    assert state["best"]["epoch"] == 3 and state["best"]["macro_f1"] == 0.649
