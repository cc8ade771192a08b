"""What a new user types: fine-tune on a CSV, export the run, predict with the run and export."""

import json

import numpy as np
import pytest
from helpers import kill_between_renames, tiny_config, write_lines

from electra_tf.cli import main
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

WORDS = ["good", "great", "fine", "bad", "awful", "poor", "the", "movie", "was", "plot", "and"]


def _setup(tmp_path):
    from electra_tf.pretraining.checkpoint import save_pretrainer
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    tokens = list(SPECIAL_TOKENS) + WORDS + [f"w{i}" for i in range(64 - 5 - len(WORDS))]
    vocab = write_vocabulary(tokens, tmp_path / "vocab.txt")
    save_pretrainer(ElectraPretrainer(tiny_config(f"data.vocab_file={vocab}")), tmp_path / "init")
    rng = np.random.default_rng(0)
    for name, n in (("train", 96), ("dev", 32), ("test", 16)):
        lines = ["id,body,verdict"]
        for i in range(n):
            positive = rng.random() < 0.5
            words = [
                *rng.choice(WORDS[6:], size=3),
                rng.choice(WORDS[:3] if positive else WORDS[3:6]),
            ]
            lines.append(f"{i},{' '.join(words)},{'happy' if positive else 'unhappy'}")
        if name == "train":
            lines += ["97,,happy", "98,the movie"]  # an empty text, a short row
        write_lines(tmp_path / f"{name}.csv", lines)


def test_finetune_export_and_predict_from_the_command_line(tmp_path, capsys):
    _setup(tmp_path)
    run = tmp_path / "runs" / "comments"
    finetune = [
        "finetune", "--init", str(tmp_path / "init"), "--train", str(tmp_path / "train.csv"),
        "--dev", str(tmp_path / "dev.csv"), "--test", str(tmp_path / "test.csv"),
        "--text-column", "body", "--label-column", "verdict", "--output-dir", str(run),
        "--epochs", "2", "--set", "learning_rate=1e-3",
    ]  # fmt: skip
    assert main(finetune) == 0
    out = capsys.readouterr().out
    assert "[finetune] comments: classification" in out  # progress lines, then the JSON
    printed = json.loads(out[out.index("\n{") + 1 :])
    assert printed["kept"]["selected_on"] == "dev" and printed["task"] == "comments"
    assert printed["skipped"]["train"] == {"empty_text": 1, "malformed_rows": 1}
    results = json.loads((run / "results.json").read_text())
    assert results["data"]["train"]["skipped_rows"] == {"empty_text": [98], "malformed_rows": [99]}
    assert results["kind_decided"].startswith("inferred: labels are names")
    info = json.loads((run / "model" / "finetuned.json").read_text())
    assert info["labels"] == ["happy", "unhappy"] and info["columns"]["text"] == "body"
    # Re-running the same command finds every seed done and changes nothing.
    before = (run / "model" / "record.json").read_text()
    assert main(finetune) == 0
    assert (run / "model" / "record.json").read_text() == before
    # A kill -9 between the two renames of republishing model/ leaves only .model.old: the
    # resume puts that folder back (the same files) instead of rebuilding it.
    kept = (run / "model" / "model.keras").stat().st_ino
    kill_between_renames(run / "model")
    assert main(finetune) == 0
    assert (run / "model" / "model.keras").stat().st_ino == kept
    assert not (run / ".model.old").exists()
    capsys.readouterr()

    assert main(["export", "--checkpoint", str(run), "--out", str(tmp_path / "serving")]) == 0
    written = json.loads(capsys.readouterr().out)["written"]
    assert written.endswith("serving/comments/1")
    # The LiteRT export, int8: checked on the run's dev and test files before it is written.
    litert = ["export", "--checkpoint", str(run), "--out", str(tmp_path / "litert"),
              "--format", "litert", "--quantize", "int8"]  # fmt: skip
    assert main(litert) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["written"].endswith("litert/comments") and printed["quantize"] == "int8"
    dev = printed["quality"]["dev"]
    kept_dev = results["runs"][0]["dev"]["accuracy"]
    assert dev["rows"] == 32 and dev["keras"] == pytest.approx(kept_dev)
    assert dev["change_points"] >= -0.5 and printed["quality"]["test"]["rows"] == 16
    test_rows = [json.loads(line) for line in (run / "predictions" / "test.jsonl").open()]
    for model in (str(run), str(tmp_path / "serving"), str(tmp_path / "litert")):
        output = tmp_path / f"predictions-{len(model)}.jsonl"
        assert main(["predict", "--model", model, "--input", str(tmp_path / "test.csv"),
                     "--output", str(output)]) == 0  # fmt: skip
        rows = [json.loads(line) for line in output.open()]
        assert [r["label"] for r in rows] == [r["label"] for r in test_rows]
        for row, expected in zip(rows, test_rows):
            for name, p in expected["probabilities"].items():  # int8: within its rounding
                assert abs(row["probabilities"][name] - p) < (1e-2 if "litert" in model else 1e-5)
    # One output line per input row, with its row number; a row it cannot read says why.
    # A row longer than the model reads (128 tokens) is counted, by the run and the export.
    lines = ["body,verdict", "good movie,happy", ",happy", "bad plot,unhappy"]
    lines.append("good " * 130 + ",happy")
    gappy = write_lines(tmp_path / "gappy.csv", lines)
    for model in (run, tmp_path / "serving", tmp_path / "litert"):
        capsys.readouterr()
        assert main(["predict", "--model", str(model), "--input", str(gappy),
                     "--output", str(tmp_path / "gappy.jsonl")]) == 0  # fmt: skip
        said = capsys.readouterr()
        summary = json.loads(said.out)
        assert summary["not_predicted"] == 1 and summary["cut_rows"] == 1
        assert "1 of 3 inputs are longer than the model reads" in said.err
    rows = [json.loads(line) for line in (tmp_path / "gappy.jsonl").open()]
    assert [r["row"] for r in rows] == [2, 3, 4, 5]
    assert rows[1] == {"row": 3, "error": "empty_text"}
    assert rows[0]["text"] == "good movie" and "label" in rows[0] and "label" in rows[2]
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "serving"), "the movie was awful"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["text"] == "the movie was awful" and row["label"] in ("happy", "unhappy")


def test_bad_input_at_the_new_doors_is_one_sentence(tmp_path, capsys):
    _setup(tmp_path)
    write_lines(tmp_path / "dev2.csv", ["body,verdict", "good movie,happy", "bad plot,furious"])
    common = ["finetune", "--init", str(tmp_path / "init"), "--train", str(tmp_path / "train.csv")]
    cases = [
        ([*common, "--dev", str(tmp_path / "dev.csv")], "has no column 'text'"),
        ([*common, "--dev", str(tmp_path / "dev2.csv"), "--text-column", "body",
          "--label-column", "verdict"], "label 'furious' never occurs in training"),
        ([*common], "needs a --dev file"),
        (["finetune", "--init", "x", "--task", "sst2", "--train", "t.csv"], "either --task"),
        (["predict", "--model", str(tmp_path / "nowhere"), "hello"], "does not exist"),
        (["export", "--checkpoint", str(tmp_path / "init"), "--out", str(tmp_path / "o"),
          "--format", "hub", "--xla"], "--xla applies to the TF Serving SavedModel only"),
        (["export", "--checkpoint", str(tmp_path / "init"), "--out", str(tmp_path / "o"),
          "--format", "litert"], "--format litert exports a fine-tuned text classifier"),
        (["export", "--checkpoint", str(tmp_path / "init"), "--out", str(tmp_path / "o"),
          "--bfloat16"], "--bfloat16 applies to a fine-tuned run's SavedModel"),
        (["export", "--checkpoint", str(tmp_path / "init"), "--out", str(tmp_path / "o"),
          "--format", "hub", "--lanes", "2"], "--lanes applies to the TF Serving SavedModel only"),
    ]  # fmt: skip
    for argv, message in cases:
        assert main(argv) == 2, argv
        error = capsys.readouterr().err
        assert message in error and "Traceback" not in error and error.count("\n") == 1, error


def test_finetune_flags_are_generated_from_the_config():
    import dataclasses

    from electra_tf.cli import build_parser
    from electra_tf.cli.finetune import _overrides
    from electra_tf.tasks.config import FinetuneConfig

    parser = build_parser()
    args = parser.parse_args(["finetune", "--init", "x", "--task", "sst2", "--learning-rate",
        "2e-4", "--group-by-length", "false", "--pad-to", "max", "--seeds", "3",
        "--set", "dropout=0.2"])  # fmt: skip
    config = FinetuneConfig().override(*_overrides(args))
    assert (config.learning_rate, config.group_by_length, config.pad_to) == (2e-4, False, "max")
    assert (config.seeds, config.dropout, config.batch_size) == (3, 0.2, 32)  # unset: default
    # Every field but the task's name has its flag, with the field's help.
    text = parser._subparsers._group_actions[0].choices["finetune"].format_help()
    for field in dataclasses.fields(FinetuneConfig):
        if field.name != "task":
            assert "--" + field.name.replace("_", "-") in text, field.name
    with pytest.raises(SystemExit):
        parser.parse_args(["finetune", "--init", "x", "--joint-end", "maybe"])


@pytest.mark.parametrize(
    "flags,message",
    [(["--seq-length", "64"], "--seq-length does not apply to a fine-tuned run: its export "
      "reads the 16 tokens it was fine-tuned with, as `predict` does"),
     (["--kernel-layout", "auto"], "--kernel-layout applies to pre-training checkpoints'"),
     (["--vocab-file", "v.txt"], "--vocab-file does not apply to a fine-tuned run"),
     (["--no-lower-case"], "--no-lower-case does not apply to a fine-tuned run"),
     (["--allow-suspect"], "--allow-suspect applies to pre-training checkpoints only"),
     (["--quantize", "int8"], "--quantize applies to --format litert only"),
     (["--format", "litert", "--seq-length", "16"], "--seq-length does not apply"),
     (["--format", "litert", "--xla"], "--xla applies to the SavedModel (--format serving)"),
     (["--format", "litert", "--bfloat16"], "--bfloat16 applies to the SavedModel (--format "
      "serving), not to a LiteRT flatbuffer"),
     (["--xla", "--bfloat16"], "--bfloat16 applies to the plain SavedModel, not to the XLA"),
     (["--format", "litert", "--lanes", "2"], "--lanes applies to the SavedModel (--format "
      "serving), not to a LiteRT flatbuffer"),
     (["--xla", "--lanes", "2"], "lanes=2 applies to the plain SavedModel; the XLA-compiled"),
     (["--lanes", "3"], "lanes=3 does not split this encoder's 2 heads and 16 feed-forward "
      "units evenly"),
     (["--lanes", "0"], "lanes must be a whole number of at least 1 (got 0)")],
)  # fmt: skip
def test_export_flags_a_fine_tuned_run_cannot_honour_are_refused(tmp_path, capsys, flags, message):
    """Issue 56, 7: each was accepted and ignored (the served QA window then differed from
    predict's); now one sentence naming the flag, and nothing written."""
    from helpers import tiny_finetuned_run

    run = tiny_finetuned_run(tmp_path / "run")
    assert main(["export", "--checkpoint", str(run), "--out", str(tmp_path / "out"), *flags]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and "Traceback" not in error, error
    assert not (tmp_path / "out").exists()
