import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from helpers import SPECIAL, VOCAB, packed_with_vocabulary, structured_ids, write_packed

from electra_tf.cli import build_parser


def _cli(*args, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "electra_tf.cli", *args], capture_output=True, text=True, **kwargs
    )


def test_help_documents_every_flag_without_loading_tensorflow():
    parser = build_parser()
    for action in parser._subparsers._group_actions[0].choices.values():
        for flag in action._actions:
            assert flag.help, f"{action.prog} {flag.option_strings} has no help"
    probe = "import sys, electra_tf.cli as c; c.build_parser(); print('tensorflow' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
        == "False"
    )
    assert "--output-dir" in _cli("pretrain", "--help").stdout


def _main(capsys, *args):
    """`electra-tf ARGS` run in this process: (exit status, stdout, stderr)."""
    from electra_tf.cli import main

    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _no_file_matches_is_one_sentence(tmp_path, capsys):
    """A --data pattern that matches nothing: `main`'s exit status 2 and one sentence."""
    code, _, err = _main(
        capsys,
        "pretrain", "--output-dir", str(tmp_path / "r"), "--data", str(tmp_path / "none*.tfrecord"),
    )  # fmt: skip
    assert code == 2 and "No file matches" in err
    assert err.startswith("electra-tf pretrain: ") and len(err.strip().splitlines()) == 1


def test_bad_configuration_is_one_sentence_and_exit_2(tmp_path, capsys):
    """Both refusals through `main` in this process; the full form, whose first refusal
    comes from a fresh `electra-tf` process, is `..._exit_2_in_a_fresh_process`."""
    code, _, err = _main(
        capsys,
        "pretrain", "--output-dir", str(tmp_path / "r"), "--data", str(tmp_path),
        "--set", "train.learnin_rate=1",
    )  # fmt: skip
    assert code == 2
    assert "unknown config key 'train.learnin_rate'" in err.lower()
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    _no_file_matches_is_one_sentence(tmp_path, capsys)


@pytest.mark.slow
def test_bad_configuration_is_one_sentence_and_exit_2_in_a_fresh_process(tmp_path, capsys):
    result = _cli(
        "pretrain",
        "--output-dir",
        str(tmp_path / "r"),
        "--data",
        str(tmp_path),
        "--set",
        "train.learnin_rate=1",
    )
    assert result.returncode == 2
    assert "unknown config key 'train.learnin_rate'" in result.stderr.lower()
    assert "Traceback" not in result.stderr
    # The same one-sentence path in this process (main's exit status, stderr).
    _no_file_matches_is_one_sentence(tmp_path, capsys)


@pytest.mark.slow
def test_pretrain_runs_and_resumes_in_fresh_processes(tmp_path):
    """The full form of `test_pretrain_runs_and_resumes`: every command in its own process."""
    data = write_packed(tmp_path / "data", n=48, seq=16, shards=2)
    base = [
        "pretrain",
        "--data",
        data,
        "--output-dir",
        str(tmp_path / "run"),
        "--verbose",
        "0",
        "--set",
        "model.num_layers=1",
        "--set",
        "train.checkpoint_every=2",
        "--set",
        "train.warmup_steps=0",
        "--batch-size",
        "8",
    ]
    first = _cli(*base, "--steps", "4", "--max-steps", "2")
    assert first.returncode == 0, first.stderr[-2000:]
    assert json.loads(first.stdout)["step"] == 2
    second = _cli(*base, "--steps", "4")
    summary = json.loads(second.stdout)
    assert summary["step"] == 4 and summary["resumed_from"] == 2
    assert summary["checkpoint"].endswith("step-00000004")
    saved = json.loads(
        (tmp_path / "run" / "checkpoints" / "step-00000004" / "config.json").read_text()
    )
    assert saved["model"]["vocabulary_size"] == 64 and saved["data"]["mask_id"] == 4
    assert list((tmp_path / "run" / "logs").glob("events.out.tfevents.*"))
    changed = _cli(*base, "--steps", "6", "--set", "model.hidden_dim=32")
    assert changed.returncode == 2 and "model.hidden_dim=128" in changed.stderr
    fresh = _cli(*base, "--steps", "6", "--no-resume")
    assert fresh.returncode == 2 and "already holds checkpoints" in fresh.stderr

    # The run's last checkpoint scored on one shard: counts, ranges, and the unigram
    # baseline against a count made here.
    shard = str(tmp_path / "data" / "shard-001.tfrecord")
    scored = _cli("evaluate", "--checkpoint", str(tmp_path / "run"), "--data", shard)
    assert scored.returncode == 0, scored.stderr[-2000:]
    report = json.loads(scored.stdout)
    assert report["examples"] == 24
    for key in (
        "disc_auc",
        "bigram_baseline_disc_auc",
        "disc_accuracy",
        "mlm_accuracy",
        "replaced_fraction",
    ):
        assert 0.0 <= report[key] <= 1.0
    ids, mask, _ = structured_ids(48, 16, VOCAB, 0)
    real = ids[1::2][mask[1::2] == 1]
    real = real[~np.isin(real, list(SPECIAL.values()))]
    expected = np.bincount(real).max() / real.size
    assert report["unigram_baseline_mlm_accuracy"] == round(float(expected), 4)


@pytest.mark.slow
def test_pretrain_streams_raw_text_without_prepare_in_a_fresh_process(tmp_path):
    """The full form of `test_pretrain_streams_raw_text_without_prepare`, in a child process."""
    words = [f"word{i}" for i in range(40)]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    lines = []
    for d in range(12):
        for s in range(6):
            lines.append(" ".join(words[(d * 7 + s * 3 + k) % 40] for k in range(5)))
        lines.append("")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n")
    result = _cli(
        "pretrain",
        "--text",
        str(corpus),
        "--vocab-file",
        str(vocab),
        "--output-dir",
        str(tmp_path / "run"),
        "--steps",
        "3",
        "--batch-size",
        "4",
        "--verbose",
        "0",
        "--set",
        "model.num_layers=1",
        "--set",
        "data.sequence_length=16",
        "--set",
        "train.warmup_steps=0",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert summary["step"] == 3 and summary["metrics"]["mlm_loss"] > 0
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["model"]["vocabulary_size"] == 45 and saved["data"]["vocab_file"] == str(vocab)
    both = _cli("pretrain", "--text", str(corpus), "--data", str(tmp_path), "--output-dir", "x")
    assert both.returncode == 2 and "not both" in both.stderr


# A one-layer, hidden-16 model on length-16 examples for the in-process pre-training runs.
_SMALL = ["--set", "model.num_layers=1", "--set", "model.hidden_dim=16", "--set",
          "model.embedding_dim=8", "--set", "model.intermediate_dim=32", "--set",
          "train.warmup_steps=0"]  # fmt: skip


def test_pretrain_runs_and_resumes(tmp_path, capsys):
    """Runs, stops at --max-steps, resumes, refuses a changed config or --no-resume, and
    evaluates, through `main` in this process on a hidden-16 model; the full form in fresh
    processes on the recipe's sizes is `test_pretrain_runs_and_resumes_in_fresh_processes`."""
    data = write_packed(tmp_path / "data", n=48, seq=16, shards=2)
    base = ["pretrain", "--data", data, "--output-dir", str(tmp_path / "run"), "--verbose", "0"]
    base += [*_SMALL, "--set", "train.checkpoint_every=2", "--batch-size", "8"]
    code, out, err = _main(capsys, *base, "--steps", "4", "--max-steps", "2")
    assert code == 0, err[-2000:]
    assert json.loads(out)["step"] == 2
    code, out, err = _main(capsys, *base, "--steps", "4")
    summary = json.loads(out)
    assert summary["step"] == 4 and summary["resumed_from"] == 2
    assert summary["checkpoint"].endswith("step-00000004")
    saved = json.loads(
        (tmp_path / "run" / "checkpoints" / "step-00000004" / "config.json").read_text()
    )
    assert saved["model"]["vocabulary_size"] == 64 and saved["data"]["mask_id"] == 4
    assert list((tmp_path / "run" / "logs").glob("events.out.tfevents.*"))
    code, _, err = _main(capsys, *base, "--steps", "6", "--set", "model.hidden_dim=32")
    assert code == 2 and "model.hidden_dim=16" in err
    code, _, err = _main(capsys, *base, "--steps", "6", "--no-resume")
    assert code == 2 and "already holds checkpoints" in err

    # The run's last checkpoint scored on one shard: counts, ranges, and the unigram
    # baseline against a count made here.
    shard = str(tmp_path / "data" / "shard-001.tfrecord")
    code, out, err = _main(
        capsys, "evaluate", "--checkpoint", str(tmp_path / "run"), "--data", shard
    )
    assert code == 0, err[-2000:]
    report = json.loads(out)
    assert report["examples"] == 24
    for key in (
        "disc_auc",
        "bigram_baseline_disc_auc",
        "disc_accuracy",
        "mlm_accuracy",
        "replaced_fraction",
    ):
        assert 0.0 <= report[key] <= 1.0
    ids, mask, _ = structured_ids(48, 16, VOCAB, 0)
    real = ids[1::2][mask[1::2] == 1]
    real = real[~np.isin(real, list(SPECIAL.values()))]
    expected = np.bincount(real).max() / real.size
    assert report["unigram_baseline_mlm_accuracy"] == round(float(expected), 4)


def test_pretrain_streams_raw_text_without_prepare(tmp_path, capsys):
    """Pre-trains on raw text through `main` in this process on a hidden-16 model; its full
    form, in a child process, is
    `test_pretrain_streams_raw_text_without_prepare_in_a_fresh_process`."""
    words = [f"word{i}" for i in range(40)]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    lines = []
    for d in range(12):
        for s in range(6):
            lines.append(" ".join(words[(d * 7 + s * 3 + k) % 40] for k in range(5)))
        lines.append("")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n")
    code, out, err = _main(
        capsys,
        "pretrain", "--text", str(corpus), "--vocab-file", str(vocab), "--output-dir",
        str(tmp_path / "run"), "--steps", "3", "--batch-size", "4", "--verbose", "0",
        *_SMALL, "--set", "data.sequence_length=16",
    )  # fmt: skip
    assert code == 0, err[-2000:]
    summary = json.loads(out)
    assert summary["step"] == 3 and summary["metrics"]["mlm_loss"] > 0
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["model"]["vocabulary_size"] == 45 and saved["data"]["vocab_file"] == str(vocab)
    code, _, err = _main(
        capsys, "pretrain", "--text", str(corpus), "--data", str(tmp_path), "--output-dir", "x"
    )
    assert code == 2 and "not both" in err


@pytest.mark.slow
def test_evaluate_probe_prints_the_table_beside_its_baselines_for_the_tiny_recipe(tmp_path, capsys):
    """The full form of `test_evaluate_probe_prints_the_table_beside_its_baselines`: random
    encoders of the tiny recipe (4 layers, hidden 128)."""
    _check_evaluate_probe(tmp_path, capsys, "scratch:tiny")


def test_evaluate_probe_prints_the_table_beside_its_baselines(tmp_path, capsys):
    """`evaluate --probe` of random encoders of a one-layer, hidden-16 recipe (a TOML file,
    as `scratch:` reads one); the full form, the tiny recipe, is
    `..._beside_its_baselines_for_the_tiny_recipe`."""
    recipe = tmp_path / "one_layer.toml"
    recipe.write_text(
        "[model]\nnum_layers = 1\nhidden_dim = 16\nembedding_dim = 8\nnum_heads = 2\n"
        "intermediate_dim = 32\nmax_sequence_length = 128\n"
    )
    _check_evaluate_probe(tmp_path, capsys, f"scratch:{recipe}")


def _check_evaluate_probe(tmp_path, capsys, scratch):
    from electra_tf.cli import main
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

    words = ["good", "great", "bad", "awful", "the", "movie", "was", "plot"]
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + words, tmp_path / "vocab.txt")
    rng = np.random.default_rng(0)
    for split, n in (("train", 120), ("dev", 40)):
        rows = ["sentence\tlabel"]
        for _ in range(n):
            label = int(rng.random() < 0.5)
            word = (
                ("good", "great")[rng.integers(2)] if label else ("bad", "awful")[rng.integers(2)]
            )
            rows.append(f"the movie was {word}\t{label}")
        (tmp_path / f"{split}.tsv").write_text("\n".join(rows) + "\n")
    args = ["evaluate", "--checkpoint", scratch, "--vocab-file", str(vocab)]
    args += ["--probe", "sst2", "--data-dir", str(tmp_path), "--random-seeds", "2"]
    assert main(args) == 0
    probe = json.loads(capsys.readouterr().out)["probe"]
    assert [row["encoder"] for row in probe["rows"]][:3] == [
        "bag of words", "random init (seed 0)", "random init (seed 1)",
    ]  # fmt: skip
    assert probe["rows"][0]["dev_accuracy"] == 1.0 and "| bag of words |" in probe["table"]
    assert main(["evaluate", "--checkpoint", "scratch:tiny"]) == 2  # nothing to evaluate


def test_experiment_objectives_default_per_experiment_and_are_kept_as_given(monkeypatch, capsys):
    import electra_tf.experiments.adaptation as adaptation
    import electra_tf.experiments.efficiency as efficiency
    from electra_tf.cli import main

    seen = {}

    def fake_adaptation(options):
        seen["adaptation"] = options
        return {"electra_beats": {}, "summary": [], "finetuned": [], "files": []}

    def fake_efficiency(options, objectives, budgets):
        seen["efficiency"] = objectives
        return {"rows": [], "claim_electra_beats_bert": {}, "files": []}

    monkeypatch.setattr(adaptation, "adaptation_experiment", fake_adaptation)
    monkeypatch.setattr(efficiency, "efficiency_experiment", fake_efficiency)
    common = ["--data", "d", "--output-dir", "o", "--budgets", "1e12"]
    given = ["--init", "i", "--objectives", "electra,bert_mlm"]
    assert main(["experiment", "adaptation", *common, *given]) == 0
    assert seen["adaptation"].objectives == ("electra", "bert_mlm")
    assert main(["experiment", "adaptation", *common, "--init", "i", "--finetune-seeds", "2"]) == 0
    assert seen["adaptation"].objectives == adaptation.ADAPTATION_OBJECTIVES
    assert seen["adaptation"].finetune_seeds == 2
    assert main(["experiment", "efficiency", *common, "--movie-file", "m"]) == 0
    assert seen["efficiency"] == ["electra", "bert_mlm"]
    capsys.readouterr()


@pytest.fixture(scope="module")
def default_thread_runs(tmp_path_factory):
    """Two 3-step `pretrain` runs of one seed, each in a fresh process at TensorFlow's
    default inter-op threads, on data whose manifest names its vocabulary (so a run can
    also be an `--init` source): (folder, data glob, each probe's stdout)."""
    folder = tmp_path_factory.mktemp("default_threads")
    data = packed_with_vocabulary(folder / "data", n=16)
    probe = (
        "import sys\nfrom electra_tf.cli import main\nimport tensorflow as tf\n"
        "code = main(sys.argv[1:])\n"
        "print(code, tf.config.threading.get_inter_op_parallelism_threads())\n"
    )
    argv = ["pretrain", "--data", data, "--verbose", "0", *_SMALL, "--steps", "3",
            "--batch-size", "8"]  # fmt: skip
    environment = {k: v for k, v in os.environ.items() if k != "TF_NUM_INTEROP_THREADS"}
    printed = {}
    for name in ("a", "b"):
        out = subprocess.run(
            [sys.executable, "-c", probe, *argv, "--output-dir", str(folder / name)],
            capture_output=True, text=True, env=environment,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        printed[name] = out.stdout
    return folder, data, printed


def test_two_pretrain_runs_at_tensorflows_default_threads_end_equal(default_thread_runs):
    """`pretrain` on TensorFlow keeps its default inter-op threads (one was set before the
    AddN rewrite was found and turned off: docs/results/durability.md), and two runs of one
    seed in fresh processes end with equal variables, bit for bit."""
    folder, _, printed = default_thread_runs
    for name in ("a", "b"):
        assert printed[name].split()[-2:] == ["0", "0"], name
    a, b = (
        tf.train.load_checkpoint(str(folder / name / "checkpoints" / "step-00000003" / "ckpt"))
        for name in ("a", "b")
    )
    names = [n for n in a.get_variable_to_shape_map() if "_CHECKPOINTABLE" not in n]
    assert len(names) > 20
    for n in names:
        np.testing.assert_array_equal(a.get_tensor(n), b.get_tensor(n), err_msg=n)


def test_a_warm_start_on_several_logical_cpus_sets_them_up_before_reading_its_weights(
    default_thread_runs, tmp_path
):
    """`train.cpu_devices` must be set before TensorFlow's first op, and `--init` reads its
    weights before the strategy is made: the devices are set up first (it was refused:
    "train.cpu_devices=2 must be set before TensorFlow initializes its devices"). Its
    source is one of the runs above."""
    folder, data, _ = default_thread_runs
    argv = ["pretrain", "--data", data, "--verbose", "0", *_SMALL, "--steps", "1",
            "--batch-size", "8", "--output-dir", str(tmp_path / "warm"), "--init",
            str(folder / "a"), "--set", "train.strategy=mirrored", "--set",
            "train.cpu_devices=2"]  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "electra_tf.cli", *argv], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads((tmp_path / "warm" / "last_run.json").read_text())
