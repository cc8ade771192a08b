"""A run records where its data and vocabulary are as absolute paths (issue 39, case 7):
resume and export work from any directory, a run recorded with relative paths still
resumes, and a recorded file that has moved is named in one sentence."""

import json

import pytest
from helpers import VOCAB, scratch_init, write_lines, write_packed

from electra_tf.cli import main
from electra_tf.finetuning.request import check_request


def _vocabulary(path):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    path.write_text("\n".join(tokens + [f"w{i}" for i in range(VOCAB - len(tokens))]) + "\n")
    return path


def _pretrain(data, vocab, run, steps):
    shrink = ["model.num_layers=1", "model.hidden_dim=16", "model.embedding_dim=8"]
    shrink += ["model.intermediate_dim=32", "train.warmup_steps=0", "train.checkpoint_every=2"]
    args = ["pretrain", "--data", data, "--vocab-file", vocab, "--output-dir", run]
    args += ["--steps", str(steps), "--batch-size", "4", "--verbose", "0"]
    return main([*args, *[a for s in shrink for a in ("--set", s)]])


@pytest.mark.slow
def test_a_pretraining_run_resumes_and_exports_from_another_directory_as_a_hub_module(
    tmp_path, monkeypatch, capsys
):
    """The full form of `test_a_pretraining_run_resumes_and_exports_from_another_directory`:
    the export is a TF Hub SavedModel (traced, with its tokenizer)."""
    _check_resume_and_export_elsewhere(tmp_path, monkeypatch, capsys, "hub")


def test_a_pretraining_run_resumes_and_exports_from_another_directory(
    tmp_path, monkeypatch, capsys
):
    """The same paths resolved for an export to the reference (TF1) checkpoint format, which
    reads the recorded vocabulary too but traces no SavedModel; the full form, a hub export,
    is `..._exports_from_another_directory_as_a_hub_module`."""
    _check_resume_and_export_elsewhere(tmp_path, monkeypatch, capsys, "reference")


def _check_resume_and_export_elsewhere(tmp_path, monkeypatch, capsys, form):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_packed(work / "data", n=64, seq=16)
    _vocabulary(work / "vocab.txt")
    monkeypatch.chdir(work)
    assert _pretrain("data", "vocab.txt", "run", steps=2) == 0
    recorded = json.loads((work / "run" / "config.json").read_text())["data"]
    assert recorded["vocab_file"] == str(work / "vocab.txt")
    assert recorded["train_files"] == str(work / "data")
    # The same files named from elsewhere: the run resumes (its config compares paths
    # absolute) and exports without --vocab-file.
    monkeypatch.chdir(elsewhere)
    assert _pretrain("../work/data", "../work/vocab.txt", "../work/run", steps=4) == 0
    states = sorted(p.name for p in (work / "run" / "checkpoints").iterdir())
    assert states[-1] == "step-00000004"
    assert main(["export", "--checkpoint", "../work/run", "--format", form, "--out", form]) == 0
    assert (elsewhere / form).is_dir()
    # The vocabulary moved: export says so in one sentence.
    (work / "vocab.txt").rename(work / "moved.txt")
    capsys.readouterr()
    assert main(["export", "--checkpoint", "../work/run", "--format", form, "--out", "x"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and not (elsewhere / "x").exists()
    assert f"records, {work / 'vocab.txt'}, is not there (moved or deleted?); give" in said[0]


def test_a_run_recorded_with_relative_paths_before_this_version_still_resumes(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    write_packed(tmp_path / "data", n=64, seq=16)
    _vocabulary(tmp_path / "vocab.txt")
    assert _pretrain("data", "vocab.txt", "run", steps=2) == 0
    for path in [tmp_path / "run" / "config.json", *tmp_path.glob("run/checkpoints/*/config.json")]:
        config = json.loads(path.read_text())
        config["data"].update(train_files="data", vocab_file="vocab.txt")  # as recorded before
        path.write_text(json.dumps(config))
    for record in tmp_path.glob("run/checkpoints/*/record.json"):
        record.unlink()  # the record would (rightly) catch the edit
    assert _pretrain("data", "vocab.txt", "run", steps=4) == 0
    assert (tmp_path / "run" / "checkpoints" / "step-00000004").is_dir()


def test_a_fine_tuning_run_resumes_from_another_directory_and_from_relative_records(
    tmp_path, monkeypatch
):
    from electra_tf.finetuning import user_task

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rows = ["text\tlabel", *[f"w{i} w{i + 1}\t{i % 2}" for i in range(5, 37)]]
    write_lines(tmp_path / "a" / "train.tsv", rows)
    vocab = _vocabulary(tmp_path / "vocab.txt")
    init = scratch_init(VOCAB, vocab)
    monkeypatch.setattr(user_task, "load_initialization", lambda spec, vocab_file=None: init)
    settings = ("epochs=1", "batch_size=16", "max_seq_length=8", "layerwise_decay=1.0")

    def run(train, out):
        return user_task.finetune_files("scratch", train=train, dev=train, output_dir=out,
                                        progress=None, overrides=settings)  # fmt: skip

    monkeypatch.chdir(tmp_path / "a")
    run("train.tsv", "run")
    request = json.loads((tmp_path / "a" / "run" / "request.json").read_text())
    assert request["data"]["train"]["path"] == str(tmp_path / "a" / "train.tsv")
    monkeypatch.chdir(tmp_path / "b")
    report = run("../a/train.tsv", "../a/run")  # the same file: the same run, done
    assert report["runs"][0]["epochs_run"] == 1
    # A request recorded with a relative path (before this version) is the same request.
    relative = {split: dict(entry, path="train.tsv") for split, entry in request["data"].items()}
    old = dict(request, data=relative)
    old.pop("digest")
    check_request(tmp_path / "b" / "old", old)
    current = json.loads((tmp_path / "a" / "run" / "request.json").read_text())
    current.pop("digest")
    check_request(tmp_path / "b" / "old", current)  # no refusal
