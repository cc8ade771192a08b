"""`export --xla` of a fine-tuned run: the encoder and head of every signature compiled by XLA,
answering as the plain export in a fresh process that never imports electra_tf, and what
"XLA off" means for its consumers (issue 57)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from helpers import TESTS

from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.export import export_finetuned
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

TOKENS = list(SPECIAL_TOKENS) + "the food was good bad slow ada met bob in rome ##s".split()
TEXTS = ["ada met bob in rome", "bob", "the food was good , bad", "romes slow"]


def _encoder():
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=1, hidden_dim=8, embedding_dim=8, num_heads=2,
        intermediate_dim=16, max_sequence_length=16,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """A classifier and a tagger, each exported plain and with `jit_compile` (--xla), and the
    consumer's inputs (`inputs.npz`: the texts and their packed ids, padding included)."""
    folder = tmp_path_factory.mktemp("xla")
    tf.keras.utils.set_random_seed(6)
    text = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=12)
    classifier = ElectraTextClassifier(_encoder(), ["bad", "good", "meh"], "classification", text)
    tags = ["B-LOC", "B-PER", "O"]
    tagger = ElectraTokenClassifier(
        _encoder(), tags, ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=12)
    )
    found = {}
    for kind, model, labels in (("classification", classifier, None), ("tagging", tagger, tags)):
        model.build()
        info = {"kind": kind, "labels": labels or model.labels, "pair": False}
        for xla in (False, True):
            name = f"{kind}{'_xla' if xla else ''}"
            found[name] = export_finetuned(
                model, info, folder, model_name=name, warmup=False, jit_compile=xla
            )
    packed = text.pack_all(TEXTS)
    np.savez(
        folder / "inputs.npz", texts=np.array(TEXTS),
        **{name: np.asarray(packed[key], np.int32) for name, key in (
            ("input_word_ids", "token_ids"), ("input_mask", "padding_mask"),
            ("input_type_ids", "segment_ids"))},
    )  # fmt: skip
    assert (np.asarray(packed["padding_mask"]) == 0).any()  # padding rows to compare
    return found, folder


def _consume(mode, folders, work):
    """Runs tests/consumers/load_task_serving_xla.py on `folders`: {folder index/key: value}."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    script = TESTS / "consumers" / "load_task_serving_xla.py"
    out = work / f"outputs-{mode}.npz"
    command = [sys.executable, str(script), mode, str(work / "inputs.npz"), str(out)]
    result = subprocess.run(
        [*command, *map(str, folders)], capture_output=True, text=True, env=env, cwd=work
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(np.load(out))


def _functions(folder):
    """{name: FunctionDef} of a SavedModel's graph library, read from saved_model.pb."""
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString((folder / "saved_model.pb").read_bytes())
    library = proto.meta_graphs[0].graph_def.library
    return {f.signature.name: f for f in library.function}


def _consume_here(folders, work):
    """What tests/consumers/load_task_serving_xla.py's `set_jit_off` mode gives for `folders`,
    computed in this process by its `answers` (`tf.config.optimizer.set_jit(False)` for the
    calls, then restored): {folder index/key: value}."""
    import importlib.util

    script = TESTS / "consumers" / "load_task_serving_xla.py"
    spec = importlib.util.spec_from_file_location("load_task_serving_xla", script)
    consumer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(consumer)
    previous = tf.config.optimizer.get_jit()
    tf.config.optimizer.set_jit(False)
    try:
        return consumer.answers(folders, np.load(work / "inputs.npz"))
    finally:
        tf.config.optimizer.set_jit(previous or False)


def _answers_as_the_plain_export(out):
    """The outputs of the four exports, `_consume`'s or `_consume_here`'s: each --xla export's
    equal the plain one's, its input checks speak."""
    assert not any(key.endswith("/error") for key in out), out
    for plain, xla in ((0, 1), (2, 3)):
        keys = sorted(
            k.split("/", 1)[1] for k in out if k.startswith(f"{plain}/") and "bad_mask" not in k
        )
        assert len(keys) == len([k for k in out if k.startswith(f"{xla}/")]) - 1
        for key in keys:
            want, got = out[f"{plain}/{key}"], out[f"{xla}/{key}"]
            if want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, atol=1e-5, err_msg=key)
            else:
                np.testing.assert_array_equal(got, want, err_msg=key)
        # The input checks run outside the compiled call: the same sentence.
        assert "input_mask must hold 0 (padding) or 1" in str(out[f"{xla}/bad_mask"])
    assert set(out["0/text/label"]) <= {"bad", "good", "meh"}
    assert [w for w in out["2/text/words"][0] if w] == TEXTS[0].split()
    assert out["3/ids/outputs"].shape == (len(TEXTS), 12, 3)  # padding rows: the head on zeros


def test_the_xla_export_answers_as_the_plain_one(exports):
    """The compiled call runs with `tf.config.optimizer.set_jit(False)` (auto-clustering off)
    and answers as the plain export: the four exports loaded and called in this process. The
    full form, in a fresh process that never imports electra_tf:
    `test_the_xla_export_answers_as_the_plain_one_in_a_fresh_process`."""
    found, work = exports
    names = ["classification", "classification_xla", "tagging", "tagging_xla"]
    _answers_as_the_plain_export(_consume_here([found[n] for n in names], work))


@pytest.mark.slow
def test_the_xla_export_answers_as_the_plain_one_in_a_fresh_process(exports):
    """In a consumer that called `tf.config.optimizer.set_jit(False)`, which turns off
    auto-clustering only: the compiled call still runs (the next test shows it must)."""
    found, work = exports
    names = ["classification", "classification_xla", "tagging", "tagging_xla"]
    _answers_as_the_plain_export(_consume("set_jit_off", [found[n] for n in names], work))


def test_the_xla_export_holds_one_compiled_call_and_says_so(exports):
    found, _ = exports
    for kind in ("classification", "tagging"):
        compiled = [
            name
            for name, f in _functions(found[f"{kind}_xla"]).items()
            if "_XlaMustCompile" in f.attr and f.attr["_XlaMustCompile"].b
        ]
        assert compiled and all("_encode" in name for name in compiled), compiled
        plain = _functions(found[kind]).values()
        assert not any("_XlaMustCompile" in f.attr for f in plain)
        for folder, xla in ((found[kind], False), (found[f"{kind}_xla"], True)):
            config = json.loads((folder / "assets.extra" / "electra_config.json").read_text())
            assert config["xla"] is xla and config["task_kind"] == kind


def test_with_xla_compilation_disabled_only_the_plain_export_answers(exports):
    """TF Serving's model server without --xla_cpu_compilation_enabled=true (its default)
    calls `DisableXlaCompilation()`: the --xla export then fails every call that reaches the
    compiled encoder, in one line; the plain export answers, and its checks still speak."""
    found, work = exports
    folders = [found["classification"], found["classification_xla"]]
    out = _consume("serving_off", folders, work)
    assert "0/error" not in out and out["0/text/logits"].shape == (len(TEXTS), 3)
    assert "1/text/logits" not in out
    assert "XLA compilation disabled" in str(out["1/error"])
    assert "input_mask must hold 0 (padding) or 1" in str(out["1/bad_mask"])


def test_export_xla_of_a_fine_tuned_run_writes_the_compiled_export(tmp_path, capsys):
    """`electra-tf export RUN --xla` was refused for fine-tuned runs; now it writes the XLA
    export (and says so), which `predict` reads as the run's labels."""
    from helpers import tiny_finetuned_run

    from electra_tf.cli import main
    from electra_tf.finetuning.predict import open_predictor

    run = tiny_finetuned_run(tmp_path / "run")
    assert main(["export", "--checkpoint", str(run), "--out", str(tmp_path / "out"), "--xla"]) == 0
    printed = json.loads(capsys.readouterr().out)
    folder = tmp_path / "out" / "food" / "1"
    assert printed["xla"] is True and printed["written"] == str(folder)
    config = json.loads((folder / "assets.extra" / "electra_config.json").read_text())
    assert config["xla"] is True
    assert any("_XlaMustCompile" in f.attr for f in _functions(folder).values())
    rows = open_predictor(folder)(["the food was good", "slow"])
    assert [row["label"] for row in rows] == [
        row["label"] for row in open_predictor(run)(["the food was good", "slow"])
    ]


def test_question_answering_under_xla_answers_as_the_plain_module(tmp_path):
    """The joint-end head (top-k starts) and the windowed answer graph, in process: the same
    answers, offsets and scores with the encoder and head compiled."""
    from electra_tf.tasks.export import TaskServingModule
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    tf.keras.utils.set_random_seed(7)
    preprocessor = ElectraQuestionAnswererPreprocessor(
        TOKENS, sequence_length=16, doc_stride=4, max_query_length=6
    )
    model = ElectraQuestionAnswerer(
        _encoder(), preprocessor, n_best=3, max_answer_length=3, joint_end=True, beam_size=3
    )
    model.build()
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{token}\n" for token in TOKENS))
    question = tf.constant(["where does bob met", "who"])
    context = tf.constant(["ada met bob in rome , the food was good in rome", "bob"])
    outputs = [
        TaskServingModule(model, str(vocab), pair=True, seq_length=16, jit_compile=xla).serve_text(
            question, context
        )
        for xla in (False, True)
    ]
    for key, want in outputs[0].items():
        got = outputs[1][key].numpy()
        if want.dtype.is_floating:
            np.testing.assert_allclose(got, want.numpy(), atol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want.numpy(), err_msg=key)
