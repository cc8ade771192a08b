"""Exports consumed by real consumers in fresh processes, and the serving graph's op set."""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import TESTS, tiny_config
from serving_ops import graph_ops, ops_missing_of_not_core

from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving.saved_model import export_for_serving

CONSUMERS = TESTS / "consumers"
WORDS = (
    "the a cat dog sat on mat ran far away house big small red blue is was and to of in it "
    "## ##s ##ed ##ing . , ! ?"
).split()
TEXTS = ["The cat sat on the mat.", "A big red dog ran far away!", "It is small and blue"]
TEXTS_B = ["The dog was big.", "Is it red?", "the house " * 20]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The tiny pretrainer, saved as a run, and ONE release of it: export/release.py run as
    `__main__` in this process (`_release`), whose TF Serving SavedModel and hub pair are
    the exports every test here reads (each format is written once, not again for them)."""
    folder = tmp_path_factory.mktemp("export")
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + WORDS, folder / "vocab.txt")
    size = len(SPECIAL_TOKENS) + len(WORDS)
    keras.utils.set_random_seed(3)
    model = ElectraPretrainer(
        tiny_config(
            f"model.vocabulary_size={size}", "model.num_layers=2", "model.max_sequence_length=32"
        )
    )
    rng = np.random.default_rng(0)
    for v in model.trainable_variables:  # non-trivial weights everywhere
        v.assign(v.numpy() + rng.normal(0, 0.05, v.shape).astype("float32"))
    release = _release(model, str(vocab), folder)
    encoder, preprocessor = (Path(p) for p in release["report"]["hub"])
    return {
        "model": model,
        "vocab": str(vocab),
        "serving": Path(release["report"]["serving"]),
        "hub": encoder.parent,
        "folder": folder,
        "hub_parts": (encoder, preprocessor),
        "release": release,
    }


def _release(model, vocab, folder):
    """export/release.py run as `__main__` in this process (`runpy`) on `model` saved as a
    run, TF Serving model name tiny, version 3, length 16: {"status": its exit status,
    "report": its JSON report, "out": its output folder}."""
    import runpy

    from electra_tf.pretraining.checkpoint import save_pretrainer

    run = save_pretrainer(model, folder / "run").parent.parent
    script = TESTS.parent / "export" / "release.py"
    argv = [str(script), "--checkpoint", str(run), "--out", str(folder / "rel"), "--vocab-file",
            vocab, "--seq-length", "16", "--model-name", "tiny", "--version", "3"]  # fmt: skip
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exited:
            runpy.run_path(str(script), run_name="__main__")
    text = printed.getvalue()
    assert "{" in text, (exited.value.code, text[-2000:])
    report = json.loads(text[text.index("{") :])
    return {"status": exited.value.code, "report": report, "out": folder / "rel"}


def _inputs(model, batch=3, length=12, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, model.config.model.vocabulary_size, size=(batch, length)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    mask = np.ones_like(ids)
    mask[0, 8:] = 0
    ids[0, 8:] = 0
    types = np.zeros_like(ids)
    types[:, 6:] = 1
    return ids, mask, types


def _serving_inputs(model):
    ids, mask, types = _inputs(model)
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types,
            "texts": np.array(TEXTS), "texts_b": np.array(TEXTS_B), "too_long": 40}  # fmt: skip


def _hub_inputs(model):
    ids, mask, types = _inputs(model, batch=2)
    rng = np.random.default_rng(1)
    train_ids = rng.integers(5, model.config.model.vocabulary_size, size=(32, 10)).astype(np.int32)
    labels = (train_ids[:, 1] % 2).astype(np.int32)
    train_ids[:, 0], train_ids[:, -1] = 2, 3
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types,
            "masked_lm_positions": np.array([[1, 2], [3, 4]], np.int32),
            "texts": np.array(TEXTS), "train_ids": train_ids,
            "train_mask": np.ones_like(train_ids), "labels": labels}  # fmt: skip


@pytest.fixture(scope="module")
def consumed(exported, tmp_path_factory):
    """ONE fresh process that never imports electra_tf (tests/consumers/run_consumers.py):
    it probes which ops of the serving and preprocessor graphs core TensorFlow lacks, then
    runs load_hub.py on the hub pair and load_serving.py on the serving export:
    {"hub": outputs, "serving": outputs, "not_core": [op]}."""
    work = tmp_path_factory.mktemp("consumed")
    model = exported["model"]
    ops = graph_ops(exported["serving"]) | graph_ops(exported["hub"] / "preprocessor")
    (work / "ops.txt").write_text("\n".join(sorted(ops)))
    command = [sys.executable, str(CONSUMERS / "run_consumers.py"), "--not-core"]
    command += [str(work / "ops.txt"), str(work / "not_core.txt")]
    for name, script, inputs in (
        ("hub", "load_hub.py", _hub_inputs(model)),
        ("serving", "load_serving.py", _serving_inputs(model)),
    ):
        np.savez(work / f"inputs-{name}.npz", **inputs)
        command += ["--", str(CONSUMERS / script), str(exported[name])]
        command += [str(work / f"inputs-{name}.npz"), str(work / f"out-{name}.npz")]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=work)
    assert result.returncode == 0, result.stderr[-3000:]
    found = {name: dict(np.load(work / f"out-{name}.npz")) for name in ("hub", "serving")}
    return {**found, "not_core": (work / "not_core.txt").read_text().split()}


def _clean_signatures(exported, shown):
    """The TF Serving layout, and `saved_model_cli show --all`'s output `shown`: every
    signature there, no init op in serving_default, each encoder weight stored once."""
    version = exported["serving"]
    assert version.parts[-2:] == ("tiny", "3")
    assert (version / "saved_model.pb").exists() and (version / "assets" / "vocab.txt").exists()
    for name in (
        "serving_default",
        "serve_text",
        "serve_text_pair",
        "input_word_ids",
        "rtd_probabilities",
        "pooled_output",
        "sequence_output",
        "text_a",
    ):
        assert name in shown
    assert "__saved_model_init_op" not in shown.split("signature_def['serving_default']")[1]
    # Each encoder weight is stored once, under `encoder_weights/<i>` (not also under the
    # discriminator's own path): the export is not twice the model's size.
    stored = dict(tf.train.list_variables(str(version / "variables" / "variables")))
    encoder = exported["model"].discriminator.encoder
    for i, weight in enumerate(encoder.weights):
        assert stored[f"encoder_weights/{i}/.ATTRIBUTES/VARIABLE_VALUE"] == list(weight.shape)
    assert not [key for key in stored if key.startswith("discriminator/encoder/")]
    head = exported["model"].discriminator.rtd_head.weights
    model_size = sum(int(np.prod(w.shape)) for w in encoder.weights + head)
    fused = sum(
        int(np.prod(shape)) for key, shape in stored.items() if key.startswith("fused_attention")
    )
    total = sum(int(np.prod(shape)) for key, shape in stored.items() if shape)
    assert total == model_size + fused


def test_tf_serving_layout_and_clean_signatures(exported):
    """`saved_model_cli show --all`'s own function (`_show_all`, what the command runs) in this
    process. The full form, the command in its own process:
    `test_tf_serving_layout_and_clean_signatures_in_a_fresh_process`."""
    from tensorflow.python.tools import saved_model_cli

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        saved_model_cli._show_all(str(exported["serving"]))
    _clean_signatures(exported, printed.getvalue())


@pytest.mark.slow
def test_tf_serving_layout_and_clean_signatures_in_a_fresh_process(exported):
    version = exported["serving"]
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "tensorflow.python.tools.saved_model_cli",
            "show",
            "--all",
            "--dir",
            str(version),
        ],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    _clean_signatures(exported, shown.stdout)


def test_warmup_requests_are_prediction_logs(exported):
    from tensorflow_serving.apis import prediction_log_pb2

    path = exported["serving"] / "assets.extra" / "tf_serving_warmup_requests"
    logs = []
    for record in tf.data.TFRecordDataset(str(path)):
        log = prediction_log_pb2.PredictionLog()
        log.ParseFromString(record.numpy())
        logs.append(log.predict_log.request)
    assert [r.model_spec.signature_name for r in logs] == ["serving_default"] * 2 + [
        "serve_text",
        "serve_text_pair",
    ]
    assert all(r.model_spec.name == "tiny" for r in logs)
    assert list(logs[1].inputs["input_word_ids"].tensor_shape.dim)[1].size == 16


def test_serving_export_equals_keras_in_a_fresh_process(exported, consumed):
    model = exported["model"]
    ids, mask, types = _inputs(model)
    out = consumed["serving"]
    keras_logits = np.asarray(
        model.discriminator(
            {"token_ids": ids, "padding_mask": mask, "segment_ids": types}, training=False
        )
    )
    sequence = np.asarray(
        model.discriminator.encoder(
            {"token_ids": ids, "padding_mask": mask, "segment_ids": types}, training=False
        )
    )
    real = mask.astype(bool)
    np.testing.assert_allclose(out["ids/rtd_logits"][real], keras_logits[real], atol=1e-5)
    np.testing.assert_allclose(
        out["ids/rtd_probabilities"][real], 1 / (1 + np.exp(-keras_logits[real])), atol=1e-5
    )
    np.testing.assert_allclose(out["ids/sequence_output"][real], sequence[real], atol=1e-5)
    np.testing.assert_allclose(out["ids/pooled_output"], sequence[:, 0], atol=1e-5)

    tokenizer = ElectraTokenizer(exported["vocab"])
    packed = pack_inputs(tokenizer.tokenize(TEXTS), sequence_length=16, cls_id=2, sep_id=3)
    np.testing.assert_array_equal(out["text/input_word_ids"], packed["token_ids"].numpy())
    text_logits = np.asarray(model.discriminator(packed, training=False))
    np.testing.assert_allclose(out["text/rtd_logits"], text_logits, atol=1e-5)
    pair = out["pair/input_word_ids"]
    assert pair.shape == (3, 16) and (pair[:, 0] == 2).all()
    assert (out["pair/input_mask"][2] == 1).all()  # the long second text was truncated to fit
    kept_a = len(tokenizer.tokenize([TEXTS[2]]).to_list()[0])
    assert (
        out["pair/input_type_ids"][2].tolist().count(1) == (16 - 3 - kept_a) + 1
    )  # B and its [SEP]

    errors = dict(e.split(": ", 1) for e in out["errors"].tolist())
    assert "longer than the model maximum of 32 positions" in errors["too_long"]
    assert "int64" in errors["wrong_dtype"] or "dtype" in errors["wrong_dtype"]
    assert "input_type_ids" in errors["missing_input"]
    assert "outside the vocabulary" in errors["bad_id"]
    assert "input_type_ids must be non-negative segment ids" in errors["bad_type"]
    assert "input_word_ids has no positions" in errors["empty"]
    assert "text_a and text_b must hold the same number of texts" in errors["pair_sizes"]
    assert not any(v.startswith("no error") for v in errors.values())


def test_xla_serving_export_equals_the_plain_one_and_keeps_its_checks(exported, tmp_path):
    import tensorflow_text  # noqa: F401  (the text signatures' ops)

    from electra_tf.config import ConfigError
    from electra_tf.serving.formats import export_model

    model = exported["model"]
    xla = export_for_serving(
        model, tmp_path, vocab_file=exported["vocab"], seq_length=16, jit_compile=True
    )
    plain_model = tf.saved_model.load(str(exported["serving"]))
    xla_model = tf.saved_model.load(str(xla))
    ids, mask, types = _inputs(model)
    feed = dict(input_word_ids=ids, input_mask=mask, input_type_ids=types)
    plain = plain_model.signatures["serving_default"](**feed)
    compiled = xla_model.signatures["serving_default"](**feed)
    for name in ("rtd_logits", "sequence_output", "pooled_output"):
        np.testing.assert_allclose(compiled[name].numpy(), plain[name].numpy(), atol=1e-5)
    text = tf.constant(TEXTS)
    np.testing.assert_allclose(
        xla_model.signatures["serve_text"](text=text)["rtd_logits"].numpy(),
        plain_model.signatures["serve_text"](text=text)["rtd_logits"].numpy(),
        atol=1e-5,
    )
    graph = xla_model.signatures["serving_default"].graph.as_graph_def()
    compiled_functions = [
        f.signature.name
        for f in graph.library.function
        if "_XlaMustCompile" in f.attr and f.attr["_XlaMustCompile"].b
    ]
    plain_graph = plain_model.signatures["serving_default"].graph.as_graph_def()
    assert compiled_functions
    assert not any("_XlaMustCompile" in f.attr for f in plain_graph.library.function)
    bad = ids.copy()
    bad[1, 2] = model.config.model.vocabulary_size
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the vocabulary"):
        xla_model.signatures["serving_default"](
            input_word_ids=bad, input_mask=mask, input_type_ids=types
        )
    with pytest.raises(ConfigError, match="--xla applies to the TF Serving SavedModel only"):
        export_model(model, tmp_path / "hub", "hub", jit_compile=True)


def test_text_graph_uses_only_ops_of_tensorflow_text_2_12_1(exported, consumed):
    """The serving and preprocessor graphs' ops (`ops_missing_from_tf_text_2_12_1`'s answer,
    with the consumers' fresh process as its probe)."""
    missing, not_core, libraries = ops_missing_of_not_core(consumed["not_core"])
    assert "WordpieceTokenizeWithOffsets" in not_core  # the probe does see tensorflow-text's ops
    assert not missing, f"ops not registered by tensorflow-text 2.12.1: {missing}"
    # The check can fail: an op added after 2.12.1 is not found there.
    assert not any(re.search(rb"(?<![\w>])RoundRobinTrim\x00", lib) for lib in libraries)
    assert not [op for op in graph_ops(exported["hub"] / "encoder") if op in not_core]


def test_hub_pair_in_fresh_processes_with_three_consumers(exported, consumed):
    model = exported["model"]
    # The Keras models are not saved beside their tf.Variables: each weight is stored once.
    encoder_dir = exported["hub_parts"][0]
    stored = dict(tf.train.list_variables(str(encoder_dir / "variables" / "variables")))
    assert not [key for key in stored if key.startswith(("encoder/", "mlm/"))]
    for i, weight in enumerate(model.discriminator.encoder.weights):
        assert stored[f"encoder_weights/{i}/.ATTRIBUTES/VARIABLE_VALUE"] == list(weight.shape)
    ids, mask, types = _inputs(model, batch=2)
    out = consumed["hub"]
    features = {"token_ids": ids, "padding_mask": mask, "segment_ids": types}
    sequence = np.asarray(model.discriminator.encoder(features, training=False))
    real = mask.astype(bool)
    np.testing.assert_allclose(out["sequence_output"][real], sequence[real], atol=1e-5)
    np.testing.assert_allclose(out["pooled_output"], sequence[:, 0], atol=1e-5)
    np.testing.assert_allclose(out["signature"], sequence[:, 0], atol=1e-5)
    np.testing.assert_allclose(out["tfsm_pooled"], sequence[:, 0], atol=1e-5)
    assert int(out["num_encoder_outputs"]) == 2
    positions = np.array([[1, 2], [3, 4]], np.int32)
    mlm = np.asarray(model.generator({**features, "mask_positions": positions}, training=False))
    np.testing.assert_allclose(out["mlm_logits"], mlm, atol=1e-5)
    tokenizer = ElectraTokenizer(exported["vocab"])
    packed = pack_inputs(tokenizer.tokenize(TEXTS), sequence_length=16, cls_id=2, sep_id=3)
    np.testing.assert_array_equal(out["pre_ids"], packed["token_ids"].numpy())
    assert int(out["tokenize_rank"]) == 3
    assert out["pair_ids"].shape == (3, 16) and out["pair_types"][0].max() == 1
    assert out["loss_after"] < out["loss_before"] and int(out["encoder_moved"]) > 10
    assert int(out["hub_trainable"]) == int(out["num_trainable"]) > 10


def _released(report, out, name="electra", version=1):
    differences = report["max_abs_difference_vs_keras"]
    assert differences["serving"] <= 1e-5 and differences["hub_encoder"] <= 1e-5
    assert 0 < differences["keras_hub_tanh_gelu"] < 1e-2  # tanh-approximate GELU
    assert (out / "serving" / name / str(version) / "saved_model.pb").exists()


def test_release_script_writes_and_checks_every_format(exported):
    """export/release.py run as `__main__` in this process (`runpy`, the `exported`
    fixture's release, whose exports the other tests read), its exit status and report read
    as the command's. The full form, the script in its own process:
    `test_release_script_writes_and_checks_every_format_in_a_fresh_process`."""
    release = exported["release"]
    assert release["status"] == 0
    _released(release["report"], release["out"], name="tiny", version=3)


@pytest.mark.slow
def test_release_script_writes_and_checks_every_format_in_a_fresh_process(exported, tmp_path):
    from electra_tf.pretraining.checkpoint import save_pretrainer

    run = save_pretrainer(exported["model"], tmp_path / "run").parent.parent
    script = TESTS.parent / "export" / "release.py"
    result = subprocess.run(
        [
            sys.executable,
            str(script),
            "--checkpoint",
            str(run),
            "--out",
            str(tmp_path / "rel"),
            "--vocab-file",
            exported["vocab"],
            "--seq-length",
            "16",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout[result.stdout.index("{") :])
    _released(report, tmp_path / "rel")


def test_the_encoder_signatures_are_traced_without_autograph(exported):
    """Every signature of the encoder export, the pass `--xla` compiles, and every function
    of the hub pair is a `tf.function` without AutoGraph (converting their call tree took
    about half of an export's time: the hub pair 9.5 CPU-s, 6.6 without); the exports
    answering as Keras are checked above."""
    from electra_tf.data.tokenizer import ElectraTokenizer
    from electra_tf.serving.hub import HubEncoder, HubPreprocessor
    from electra_tf.serving.saved_model import ServingModule, float32_discriminator

    discriminator = float32_discriminator(exported["model"])
    tokenizer = ElectraTokenizer(exported["vocab"])
    for jit_compile in (False, True):
        module = ServingModule(discriminator, tokenizer, seq_length=16, jit_compile=jit_compile)
        functions = {"serve": module.serve, "serve_text": module.serve_text,
                     "serve_text_pair": module.serve_text_pair}  # fmt: skip
        if jit_compile:
            functions["forward"] = module._forward
        assert {name: f._autograph for name, f in functions.items()} == dict.fromkeys(
            functions, False
        ), jit_compile
    encoder = HubEncoder(discriminator, exported["model"].generator)  # with its `.mlm`
    preprocessor = HubPreprocessor(tokenizer, seq_length=16)
    hub = {"encoder.__call__": encoder.__call__, "encoder.serving": encoder.serving,
           "encoder.serve": encoder.serve, "encoder.mlm.__call__": encoder.mlm.__call__,
           "preprocessor.__call__": preprocessor.__call__,
           "preprocessor.tokenize": preprocessor.tokenize,
           "preprocessor.bert_pack_inputs": preprocessor.bert_pack_inputs}  # fmt: skip
    assert {name: f._autograph for name, f in hub.items()} == dict.fromkeys(hub, False)


def test_the_serving_export_with_two_lanes_answers_as_one_lane(exported, tmp_path):
    """The encoder export's lanes (recorded; one by default), two equal to one chain within
    1e-5 and storing their copies; lanes where one chain is asked for, or that do not split
    the heads, refused in one sentence."""
    from electra_tf.config import ConfigError
    from electra_tf.serving.formats import export_model

    model = exported["model"]

    def lanes_of(folder):
        return json.loads((folder / "assets.extra" / "electra_config.json").read_text())["lanes"]

    two = export_for_serving(
        model, tmp_path, vocab_file=exported["vocab"], seq_length=16, lanes=2, warmup=False
    )  # fmt: skip
    assert (lanes_of(exported["serving"]), lanes_of(two)) == (1, 2)
    stored = dict(tf.train.list_variables(str(two / "variables" / "variables")))
    copies = sum(
        int(np.prod(shape)) for key, shape in stored.items() if key.startswith("lane_weights")
    )
    encoder = model.discriminator.encoder
    h, units = encoder.hidden_dim, encoder.intermediate_dim
    assert copies == encoder.num_layers * (3 * h * h + 3 * h + h * units + units)
    ids, mask, types = _inputs(model)
    feed = dict(input_word_ids=ids, input_mask=mask, input_type_ids=types)
    two_out = tf.saved_model.load(str(two)).signatures["serving_default"](**feed)
    one_out = tf.saved_model.load(str(exported["serving"])).signatures["serving_default"](**feed)
    for name in ("rtd_logits", "sequence_output", "pooled_output"):
        np.testing.assert_allclose(two_out[name].numpy(), one_out[name].numpy(), atol=1e-5)
    refused = [
        (dict(format="hub", lanes=2), "--lanes applies to the TF Serving SavedModel only"),
        (dict(jit_compile=True, lanes=2), "lanes=2 applies to the plain SavedModel's own pass"),
        (dict(kernel_layout="transposed", lanes=2), "not to an XLA-compiled, Keras-layers or "
         "transposed-kernel one"),
        (dict(lanes=3), "lanes=3 does not split this encoder's 2 heads"),
    ]  # fmt: skip
    for options, message in refused:
        with pytest.raises(ConfigError, match=re.escape(message)):
            export_model(model, tmp_path / "refused", vocab_file=exported["vocab"], **options)
        assert not (tmp_path / "refused" / "electra").exists()
