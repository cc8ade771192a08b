"""A fine-tuned model's SavedModel: raw text in, the Keras model's labels and probabilities out,
in a fresh process that never imports electra_tf."""

import base64
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from helpers import TESTS
from serving_ops import ops_missing_from_tf_text_2_12_1

from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.export import TaskServingModule, export_finetuned
from electra_tf.tasks.initialization import load_initialization
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

TOKENS = list(SPECIAL_TOKENS) + "the food was good bad slow quick ada met bob in rome ##s".split()
TEXTS = ["the food was good", "Bad, SLOW food!", "quick", "the food was good in rome " * 3]
PAIRS = ["was it good", "the food", "bad bad", "rome"]


def _encoder():
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=2, hidden_dim=16, embedding_dim=8, num_heads=2,
        intermediate_dim=32, max_sequence_length=32,
    )  # fmt: skip


def _examples(ids, mask, types):
    rows = []
    for a, b, c in zip(ids, mask, types):
        feature = {
            name: tf.train.Feature(int64_list=tf.train.Int64List(value=list(map(int, v))))
            for name, v in (("input_word_ids", a), ("input_mask", b), ("input_type_ids", c))
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        rows.append(base64.b64encode(example.SerializeToString()).decode())
    return np.array(rows)  # base64: an .npz holds no object arrays


def _consume(folder, inputs, tmp_path):
    np.savez(tmp_path / "inputs.npz", **inputs)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    script = TESTS / "consumers" / "load_task_serving.py"
    command = [sys.executable, str(script), str(folder), str(tmp_path / "inputs.npz")]
    result = subprocess.run(
        [*command, str(tmp_path / "outputs.npz")], capture_output=True, text=True, env=env,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(np.load(tmp_path / "outputs.npz"))


def _ids(model, texts, pairs=None):
    packed = model.preprocessor.pack_all(texts, pairs)
    return packed["token_ids"], packed["padding_mask"], packed["segment_ids"]


@pytest.mark.parametrize("kind", ["classification", "multi_label", "regression"])
def test_the_text_export_answers_as_the_keras_model(tmp_path, kind):
    tf.keras.utils.set_random_seed(4)
    labels = None if kind == "regression" else ["negative", "neutral", "positive"]
    preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=24)
    model = ElectraTextClassifier(_encoder(), labels, kind, preprocessor)
    model.build()
    if kind == "multi_label":  # a bias that makes some labels chosen and some not
        model.output_dense.bias.assign(np.array([0.8, -0.8, 0.01], np.float32))
    pair = kind == "classification"
    info = {"kind": kind, "labels": labels, "pair": pair, "task": "reviews"}
    folder = export_finetuned(model, info, tmp_path / "export", model_name="reviews")
    assert folder == tmp_path / "export" / "reviews" / "1"
    assert (folder / "assets.extra" / "tf_serving_warmup_requests").stat().st_size > 0
    x = (TEXTS, PAIRS) if pair else TEXTS
    ids, mask, types = _ids(model, *((TEXTS, PAIRS) if pair else (TEXTS,)))
    inputs = {"texts": np.array(TEXTS), "input_word_ids": ids, "input_mask": mask}
    inputs.update(input_type_ids=types, examples=_examples(ids, mask, types))
    if pair:
        inputs["text_pairs"] = np.array(PAIRS)
    out = _consume(folder, inputs, tmp_path)
    logits = model.predict(x)
    decoded = model.decode(logits)
    np.testing.assert_allclose(out["ids/outputs"], logits, atol=1e-5)
    np.testing.assert_allclose(out["examples/outputs"], logits, atol=1e-5)
    assert "input_mask must hold 0 (padding) or 1" in str(out["error/bad_mask"])
    if kind == "classification":  # TF Serving's model server has tensorflow-text 2.12.1
        missing, not_core, _ = ops_missing_from_tf_text_2_12_1([folder])
        assert "WordpieceTokenizeWithOffsets" in not_core and not missing
    # `electra-tf predict --model EXPORT` reads the same answers back, as the run's rows.
    from electra_tf.finetuning.predict import open_predictor

    rows = open_predictor(folder.parent)(TEXTS, PAIRS if pair else None)
    for row, want in zip(rows, decoded):
        for key, value in want.items():
            if key == "probabilities":
                assert row[key] == pytest.approx(value, abs=1e-5)
            else:
                assert row[key] == pytest.approx(value, abs=1e-5) if key == "score" else value
    if kind == "regression":
        np.testing.assert_allclose(out["text/score"], logits, atol=1e-5)
        return
    probabilities = [[row["probabilities"][n] for n in labels] for row in decoded]
    np.testing.assert_allclose(out["text/probabilities"], probabilities, atol=1e-5)
    np.testing.assert_allclose(out["text/logits"], logits, atol=1e-5)
    if kind == "multi_label":
        served = [[n for n in row if n] for row in out["text/labels"]]
        assert served == [row["labels"] for row in decoded] and served[0] == ["negative"]
        return
    assert list(out["text/label"]) == [row["label"] for row in decoded]
    assert out["text/label_id"].tolist() == np.argmax(logits, -1).tolist()
    # The export is an initialization source: its encoder weights read back by position.
    init = load_initialization(str(folder))
    for got, want in zip(init.weights, model.encoder.weights):
        np.testing.assert_array_equal(got, want.numpy())
    assert init.lower_case


def test_the_tagging_export_tags_whitespace_words_as_the_keras_model(tmp_path):
    tf.keras.utils.set_random_seed(5)
    labels = ["B-LOC", "B-PER", "O"]
    preprocessor = ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=12)
    model = ElectraTokenClassifier(_encoder(), labels, preprocessor)
    model.build()
    model.output_dense.bias.assign(np.array([0.02, 0.01, 0.0], np.float32))
    folder = export_finetuned(model, {"kind": "tagging", "labels": labels}, tmp_path / "e")
    texts = ["ada met bob in rome", "bob", "rome rome rome rome rome rome rome rome rome rome rome"]
    packed = model.preprocessor.pack_all(texts)
    ids, mask, types = packed["token_ids"], packed["padding_mask"], packed["segment_ids"]
    inputs = {"texts": np.array(texts), "input_word_ids": ids, "input_mask": mask}
    inputs.update(input_type_ids=types, examples=_examples(ids, mask, types))
    out = _consume(folder, inputs, tmp_path)
    expected = model.predict_labels(texts)
    for row, words, tags in zip(expected, out["text/words"], out["text/tags"]):
        count = len(row["words"])
        assert list(words[:count]) == row["words"]
        assert list(tags[:count]) == row["tags"]
    assert expected[2]["tags"][-1] == "" and out["text/tag_ids"][2, 10] == -1  # past 10 pieces
    assert not ops_missing_from_tf_text_2_12_1([folder])[0]
    from electra_tf.finetuning.predict import open_predictor

    rows = open_predictor(folder)(texts)
    assert [r["tags"] for r in rows] == [r["tags"] for r in expected]
    assert [r["words"] for r in rows] == [r["words"] for r in expected]
    keras_logits = model.predict_on_batch(dict(token_ids=ids, padding_mask=mask, segment_ids=types))
    real = np.asarray(mask) > 0  # the export skips padding: its rows get the head on zeros
    assert (~real).sum() > 0
    np.testing.assert_allclose(out["ids/outputs"][real], keras_logits[real], atol=1e-5)
    np.testing.assert_allclose(out["ids/outputs"][~real], [[0.02, 0.01, 0.0]] * (~real).sum())


@pytest.mark.parametrize("kind", ["classification", "regression", "tagging"])
def test_an_empty_batch_gets_empty_answers(tmp_path, kind):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{token}\n" for token in TOKENS))
    if kind == "tagging":
        preprocessor = ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=12)
        model = ElectraTokenClassifier(_encoder(), ["B-LOC", "O"], preprocessor)
    else:
        preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=12)
        labels = None if kind == "regression" else ["negative", "positive"]
        model = ElectraTextClassifier(_encoder(), labels, kind, preprocessor)
    model.build()
    module = TaskServingModule(model, str(vocab))
    empty = module.serve_text(tf.constant([], tf.string))
    two = module.serve_text(tf.constant(["the food was good", ""]))
    assert set(empty) == set(two)
    for name, value in empty.items():  # the batch axis 0, every other axis as for 2 texts
        assert value.shape[0] == 0 and two[name].shape[0] == 2, name
        kept = 2 if kind == "tagging" else 1  # tagging's word axis is the longest text's
        assert value.shape[kept:] == two[name].shape[kept:], name
