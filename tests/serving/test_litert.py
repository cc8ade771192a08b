"""The LiteRT export of a fine-tuned text classifier: raw text in, the Keras model's answers out;
int8 that is really quantized; the export's accuracy check and its refusals."""

import json

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.finetuning.predict import open_predictor
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks import litert_quality
from electra_tf.tasks.litert import LiteTextModule, export_litert, open_litert
from electra_tf.tasks.registry import get_kind
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

WORDS = "the food was good bad slow quick ada met bob in rome cafe deja vu naive , ! .".split()
WORDS += ["東", "京"]
TOKENS = list(SPECIAL_TOKENS) + WORDS + ["##s", "##d"]
TEXTS = ["the food was good", "Bad, SLOW food!", "quick", "the food was good in rome " * 3,
         "Café déjà vu, naïve!", "東京 goods", ""]  # fmt: skip
PAIRS = ["was it good", "the food", "bad bad", "rome", "cafe", "京", "quick"]


def _model(kind, hidden=16, intermediate=32, lower_case=True, strip_accents=None, seed=4):
    tf.keras.utils.set_random_seed(seed)
    encoder = ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=2, hidden_dim=hidden, embedding_dim=hidden,
        num_heads=2, intermediate_dim=intermediate, max_sequence_length=64,
    )  # fmt: skip
    preprocessor = ElectraTextClassifierPreprocessor(
        TOKENS, sequence_length=24, lower_case=lower_case, strip_accents=strip_accents
    )
    labels = None if kind == "regression" else ["negative", "neutral", "positive"]
    model = ElectraTextClassifier(encoder, labels, kind, preprocessor)
    model.build()
    if kind == "multi_label":  # some labels chosen, some not
        model.output_dense.bias.assign(np.array([0.8, -0.8, 0.01], np.float32))
    return model


@pytest.mark.parametrize(
    "kind,pair", [("classification", True), ("multi_label", False), ("regression", False)]
)
def test_litert_answers_as_the_keras_model(tmp_path, kind, pair):
    model = _model(kind)
    info = {"kind": kind, "pair": pair, "task": "reviews"}
    folder = export_litert(model, info, tmp_path / "out", model_name="reviews")
    assert folder == tmp_path / "out" / "reviews"
    run, config = open_litert(folder)
    assert config["format"] == "litert" and config["quantize"] is None
    pairs = PAIRS if pair else None
    out = run(TEXTS, pairs)
    keras = model.predict((TEXTS, PAIRS) if pair else TEXTS, verbose=0)
    np.testing.assert_allclose(out["score" if kind == "regression" else "logits"], keras, atol=1e-5)
    # `electra-tf predict --model OUT` reads the folder as it reads a SavedModel export.
    rows = open_predictor(tmp_path / "out")(TEXTS, pairs)
    want = get_kind(kind).decode(keras, model.labels)
    for row, expected in zip(rows, want, strict=True):
        if kind == "regression":
            assert row["score"] == pytest.approx(expected["score"], abs=1e-5)
        elif kind == "multi_label":
            assert row["labels"] == expected["labels"]
        else:
            assert row["label"] == expected["label"]


def test_litert_packs_the_text_as_the_keras_preprocessor():
    model = _model("classification")
    module = LiteTextModule(model, pair=True, seq_length=24)
    ids, mask, segments = (t.numpy() for t in module.packed(tf.constant(TEXTS), tf.constant(PAIRS)))
    want = model.preprocessor.pack_all(TEXTS, PAIRS)
    width = ids.shape[1]
    assert width == int(np.asarray(want["padding_mask"]).sum(1).max())  # the longest row
    np.testing.assert_array_equal(ids, np.asarray(want["token_ids"])[:, :width])
    np.testing.assert_array_equal(mask, np.asarray(want["padding_mask"])[:, :width])
    np.testing.assert_array_equal(segments, np.asarray(want["segment_ids"])[:, :width])


def test_int8_stores_int8_weights_and_stays_close(tmp_path):
    model = _model("classification", hidden=64, intermediate=256)  # kernels over 1,024 values
    info = {"kind": "classification", "pair": False}
    fp32 = export_litert(model, info, tmp_path / "fp32", model_name="m")
    int8 = export_litert(
        model, info, tmp_path / "int8", model_name="m", quantize="int8", force=True
    )  # no dev file to check it on: kept unchecked
    size = {p: (p / "model.tflite").stat().st_size for p in (fp32, int8)}
    kernels = [w for w in model.encoder.weights if len(w.shape) == 2 and np.prod(w.shape) >= 1024]
    kernel_bytes = sum(4 * int(np.prod(w.shape)) for w in kernels)  # float32
    assert size[fp32] - size[int8] >= 0.7 * kernel_bytes  # 1 byte a weight instead of 4
    a, b = (open_litert(p)[0](TEXTS)["logits"] for p in (fp32, int8))
    assert 0 < np.abs(a - b).max() < 0.05


def _op_counts(path) -> dict:
    """{builtin op name: count} of a flatbuffer's main graph."""
    from tensorflow.lite.python import schema_py_generated as schema

    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(path.read_bytes(), 0))
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    counts = {}
    for op in model.subgraphs[0].operators:
        code = model.operatorCodes[op.opcodeIndex]
        name = names.get(max(code.builtinCode, code.deprecatedBuiltinCode))
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_both_layer_norm_forms_equal_numpy_and_keras():
    from electra_tf.serving import inference

    layer = tf.keras.layers.LayerNormalization(epsilon=1e-12)
    x = tf.constant([[1.0, 2.0, 4.0, 9.0], [-3.0, 0.5, 0.5, 2.0]])
    layer.build(x.shape)
    layer.gamma.assign([1.0, 2.0, 0.5, -1.0])
    layer.beta.assign([0.0, 0.1, -0.2, 3.0])
    centered = x.numpy() - x.numpy().mean(-1, keepdims=True)  # worked by numpy
    expected = centered / np.sqrt((centered**2).mean(-1, keepdims=True) + 1e-12)
    expected = expected * layer.gamma.numpy() + layer.beta.numpy()
    for norm in (inference._layer_norm, inference._layer_norm_lite):
        np.testing.assert_allclose(norm(x, layer), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(layer(x), expected, rtol=1e-6, atol=1e-6)


def test_the_flatbuffer_holds_one_op_fewer_a_layer_norm(tmp_path, monkeypatch):
    from electra_tf.serving import inference

    model = _model("classification")  # 2 blocks: 5 LayerNorms (embeddings, 2 per block)
    info = {"kind": "classification"}
    counts = _op_counts(export_litert(model, info, tmp_path / "a", model_name="m") / "model.tflite")
    assert counts["RSQRT"] == counts["SQUARED_DIFFERENCE"] == 5 and counts["MEAN"] == 10
    monkeypatch.setattr(inference, "_layer_norm_lite", inference._layer_norm)  # moments' form
    before = _op_counts(export_litert(model, info, tmp_path / "b", model_name="m") / "model.tflite")
    assert before["MUL"] - counts["MUL"] >= 5  # one multiply fewer per LayerNorm
    assert sum(before.values()) - sum(counts.values()) >= 5


def test_kinds_and_settings_litert_cannot_hold_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="folds case and strips accents together"):
        LiteTextModule(_model("classification", strip_accents=False))
    model = _model("classification")
    model.kind = "tagging"
    with pytest.raises(ConfigError, match="A tagging model has no LiteRT export yet"):
        LiteTextModule(model)


def test_the_int8_rule_decides_on_dev_only():
    def report(dev, test=0.0):
        split = {"metric": "accuracy", "keras": 0.8}
        return {
            "dev": {**split, "litert": 0.8 + dev / 100, "change_points": dev},
            "test": {**split, "litert": 0.8 + test / 100, "change_points": test},
        }

    litert_quality.decide(report(-0.4, test=-10.0), "int8")  # test never decides
    litert_quality.decide(report(-3.0), None)  # float32 is not checked
    litert_quality.decide(report(-3.0), "int8", force=True)
    with pytest.raises(ConfigError, match=r"int8 loses 0\.60 points of dev accuracy"):
        litert_quality.decide(report(-0.6), "int8")
    with pytest.raises(ConfigError, match="Cannot check int8's accuracy on dev"):
        litert_quality.decide({"dev": {"not_measured": "x is missing"}}, "int8")


def test_measure_scores_the_runs_files_and_a_refusal_publishes_nothing(tmp_path):
    model = _model("classification", hidden=64, intermediate=256)
    rows = [{"text": t, "label": ["negative", "neutral", "positive"][i % 3]}
            for i, t in enumerate([t for t in TEXTS if t] * 3)]  # fmt: skip
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = {"dev": {"path": str(path)}, "test": {"path": str(tmp_path / "gone.jsonl")}}
    columns = {"text": "text", "label": "label"}
    info = {"kind": "classification", "pair": False, "columns": columns, "data": data}
    keras = np.argmax(model.predict([r["text"] for r in rows], verbose=0), -1)
    gold = np.array([["negative", "neutral", "positive"].index(r["label"]) for r in rows])

    def check(folder):
        report = litert_quality.measure(model, info, open_litert(folder)[0])
        assert report["dev"]["rows"] == len(rows)
        assert report["dev"]["keras"] == pytest.approx(float(np.mean(keras == gold)), abs=1e-5)
        assert "gone.jsonl is missing" in report["test"]["not_measured"]
        report["dev"]["change_points"] = -1.0  # as if int8 had lost a point
        litert_quality.decide(report, "int8")

    with pytest.raises(ConfigError, match="int8 loses 1.00 points"):
        export_litert(model, info, tmp_path / "out", model_name="m", quantize="int8", check=check)
    assert not (tmp_path / "out" / "m").exists()


def test_the_python_path_checks_int8_as_the_cli_does(tmp_path):
    model = _model("classification", hidden=8, intermediate=16)
    labels = ["negative", "neutral", "positive"]
    rows = [{"text": t, "label": labels[i % 3]} for i, t in enumerate([t for t in TEXTS if t])]
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    columns = {"text": "text", "label": "label"}
    info = {"kind": "classification", "pair": False, "columns": columns}
    with pytest.raises(ConfigError, match=r"Cannot check int8's accuracy on dev \(the run "):
        export_litert(model, info, tmp_path / "out", model_name="m", quantize="int8")
    assert not (tmp_path / "out" / "m").exists()  # before: an unchecked int8 model
    info["data"] = {"dev": {"path": str(tmp_path / "dev.jsonl")}}
    folder = export_litert(model, info, tmp_path / "out", model_name="m", quantize="int8")
    keras = np.argmax(model.predict([r["text"] for r in rows], verbose=0), -1)
    accuracy = float(np.mean(keras == [i % 3 for i in range(len(rows))]))
    dev = json.loads((folder / "electra_config.json").read_text())["quality"]["dev"]
    assert dev["rows"] == len(rows) and dev["keras"] == pytest.approx(accuracy, abs=1e-5)


def test_the_litert_signature_is_traced_without_autograph():
    """The flatbuffer's `serve_text` is a `tf.function` without AutoGraph, as the SavedModel's
    signatures are (converting its call tree is time spent for nothing); the flatbuffer
    answering as the Keras model is checked above."""
    module = LiteTextModule(_model("classification"), pair=True, seq_length=24)
    assert module.serve_text._autograph is False
