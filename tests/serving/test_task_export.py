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
from serving_ops import graph_ops, ops_missing_of_not_core

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
TAGGED = ["ada met bob in rome", "bob", "rome rome rome rome rome rome rome rome rome rome rome"]


def _encoder():
    """One block, hidden 8: every export here traces its signatures over it."""
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=1, hidden_dim=8, embedding_dim=8, num_heads=2,
        intermediate_dim=16, max_sequence_length=32,
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


def _consume_here(jobs, work):
    """What tests/consumers/load_task_serving.py writes for every `(folder, inputs)` of `jobs`,
    served in this process by its `consume`: {name: {output key: value}}."""
    import importlib.util

    script = TESTS / "consumers" / "load_task_serving.py"
    spec = importlib.util.spec_from_file_location("load_task_serving", script)
    consumer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(consumer)
    outputs = {}
    for name, (folder, inputs) in jobs.items():
        np.savez(work / f"inputs-{name}.npz", **inputs)
        consumer.consume(str(folder), work / f"inputs-{name}.npz", work / f"out-{name}.npz")
        outputs[name] = dict(np.load(work / f"out-{name}.npz"))
    return outputs


def _consume_all(jobs, work, ops):
    """Runs tests/consumers/load_task_serving.py once on every `(folder, inputs)` of `jobs`
    ({name: ...}): one fresh process for them all (run_consumers.py), which first probes
    which of `ops` core TensorFlow lacks; ({name: {output key: value}}, those ops)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    (work / "ops.txt").write_text("\n".join(sorted(ops)))
    consumers = TESTS / "consumers"
    command = [sys.executable, str(consumers / "run_consumers.py"), "--not-core"]
    command += [str(work / "ops.txt"), str(work / "not_core.txt")]
    command += ["--", str(consumers / "load_task_serving.py")]
    for name, (folder, inputs) in jobs.items():
        np.savez(work / f"inputs-{name}.npz", **inputs)
        command += [str(folder), str(work / f"inputs-{name}.npz"), str(work / f"out-{name}.npz")]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=work)
    assert result.returncode == 0, result.stderr[-3000:]
    outputs = {name: dict(np.load(work / f"out-{name}.npz")) for name in jobs}
    return outputs, (work / "not_core.txt").read_text().split()


def _text_model(kind):
    """The text classifier of `kind` (seed 4), exported as `reviews` with the consumer's inputs."""
    tf.keras.utils.set_random_seed(4)
    labels = None if kind == "regression" else ["negative", "neutral", "positive"]
    preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=24)
    model = ElectraTextClassifier(_encoder(), labels, kind, preprocessor)
    model.build()
    if kind == "multi_label":  # a bias that makes some labels chosen and some not
        model.output_dense.bias.assign(np.array([0.8, -0.8, 0.01], np.float32))
    return model


def _tagger():
    tf.keras.utils.set_random_seed(5)
    preprocessor = ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=12)
    model = ElectraTokenClassifier(_encoder(), ["B-LOC", "B-PER", "O"], preprocessor)
    model.build()
    model.output_dense.bias.assign(np.array([0.02, 0.01, 0.0], np.float32))
    return model


def _consumer_inputs(model, texts, pairs=None):
    ids, mask, types = _ids(model, texts, pairs)
    inputs = {"texts": np.array(texts), "input_word_ids": ids, "input_mask": mask}
    inputs.update(input_type_ids=types, examples=_examples(ids, mask, types))
    if pairs is not None:
        inputs["text_pairs"] = np.array(pairs)
    return inputs


FRESH = [
    pytest.param(False, id="in_process"),
    pytest.param(True, marks=pytest.mark.slow, id="fresh_process"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory, request):
    """The three text kinds and the tagger, each exported once, and what ONE fresh consumer
    process (never importing electra_tf) read from every export: ({kind: (model, folder, out,
    export base)}, the ops of the classification and tagging graphs core TensorFlow lacks);
    the tagger's inputs are `TAGGED`. With `request.param` False (the default selection) the
    consumer's `consume` serves them in this process instead, and the ops are None: the
    fresh process, and the ops it probes, are the `fresh_process` (slow) cases'."""
    work = tmp_path_factory.mktemp("served")
    models, folders, jobs = {}, {}, {}
    for kind in ("classification", "multi_label", "regression"):
        model = models[kind] = _text_model(kind)
        labels = None if kind == "regression" else model.labels
        pair = kind == "classification"
        info = {"kind": kind, "labels": labels, "pair": pair, "task": "reviews"}
        base = work / kind / "export"
        folders[kind] = export_finetuned(model, info, base, model_name="reviews")
        jobs[kind] = (folders[kind], _consumer_inputs(model, TEXTS, PAIRS if pair else None))
    model = models["tagging"] = _tagger()
    info = {"kind": "tagging", "labels": model.labels}
    folders["tagging"] = export_finetuned(model, info, work / "tagging" / "e")
    jobs["tagging"] = (folders["tagging"], _consumer_inputs(model, TAGGED))
    if request.param:
        ops = set().union(*(graph_ops(folders[kind]) for kind in ("classification", "tagging")))
        outputs, not_core = _consume_all(jobs, work, ops)
    else:
        outputs, not_core = _consume_here(jobs, work), None
    found = {kind: (models[kind], folders[kind], outputs[kind], work / kind) for kind in models}
    return found, not_core


@pytest.mark.parametrize("served", FRESH[:1], indirect=True)
def test_warm_up_requests_cover_every_packed_length_and_each_answers(served):
    """TF Serving replays `tf_serving_warmup_requests` on load: at batch 1 one text packing to
    each length from 3 (one word and [CLS], [SEP]) up to the longest, a batch of 8, and
    `serve`; each request answers through its signature here."""
    from tensorflow_serving.apis import prediction_log_pb2

    for kind in ("classification", "tagging"):
        model, folder, _, _ = served[0][kind]
        loaded = tf.saved_model.load(str(folder))
        path = folder / "assets.extra" / "tf_serving_warmup_requests"
        lengths, batches = [], []
        for record in tf.data.TFRecordDataset(str(path)):
            log = prediction_log_pb2.PredictionLog()
            log.ParseFromString(record.numpy())
            request = log.predict_log.request
            inputs = {k: tf.make_ndarray(v) for k, v in request.inputs.items()}
            outputs = loaded.signatures[request.model_spec.signature_name](
                **{k: tf.constant(v) for k, v in inputs.items()}
            )
            assert outputs  # answered
            texts = [t.decode() for t in inputs.get("text", [])]
            batches.append(len(texts) or len(inputs["input_word_ids"]))
            pairs = [t.decode() for t in inputs["text_pair"]] if "text_pair" in inputs else None
            if len(texts) == 1:
                mask = model.preprocessor.pack_all(texts, pairs)["padding_mask"]
                lengths.append(int(np.sum(mask)))
        seq = model.preprocessor.sequence_length
        if kind == "classification":  # pairs: the second text one word, after its [SEP]
            assert sorted(lengths) == [*range(5, seq + 1), seq, seq]
        else:
            assert sorted(lengths) == list(range(3, seq + 1))
        assert batches.count(8) == 1 and len(batches) == len(lengths) + 2


@pytest.fixture(scope="module")
def tf_text_ops(served):
    """{kind: (ops neither core nor in tensorflow-text 2.12.1, ops not core)} of the
    classification and tagging exports (`ops_missing_from_tf_text_2_12_1`'s answer, with the
    consumer process as its probe)."""
    exports, not_core = served
    if not_core is None:  # served in this process: no probe
        return None
    missing, not_core, _ = ops_missing_of_not_core(not_core)
    found = {}
    for kind in ("classification", "tagging"):
        ops = graph_ops(exports[kind][1])
        found[kind] = ([op for op in missing if op in ops], [op for op in not_core if op in ops])
    return found


def _ids(model, texts, pairs=None):
    packed = model.preprocessor.pack_all(texts, pairs)
    return packed["token_ids"], packed["padding_mask"], packed["segment_ids"]


@pytest.mark.parametrize("served", FRESH, indirect=True)
@pytest.mark.parametrize("kind", ["classification", "multi_label", "regression"])
def test_the_text_export_answers_as_the_keras_model(served, tf_text_ops, kind):
    model, folder, out, base = served[0][kind]
    labels = model.labels if kind != "regression" else None
    pair = kind == "classification"
    assert folder == base / "export" / "reviews" / "1"
    assert (folder / "assets.extra" / "tf_serving_warmup_requests").stat().st_size > 0
    x = (TEXTS, PAIRS) if pair else TEXTS
    logits = model.predict(x)
    decoded = model.decode(logits)
    np.testing.assert_allclose(out["ids/outputs"], logits, atol=1e-5)
    np.testing.assert_allclose(out["examples/outputs"], logits, atol=1e-5)
    assert "input_mask must hold 0 (padding) or 1" in str(out["error/bad_mask"])
    if kind == "classification" and tf_text_ops:  # TF Serving's has tensorflow-text 2.12.1
        missing, not_core = tf_text_ops[kind]
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


@pytest.mark.parametrize("served", FRESH, indirect=True)
def test_the_tagging_export_tags_whitespace_words_as_the_keras_model(served, tf_text_ops):
    model, folder, out, _ = served[0]["tagging"]
    texts = TAGGED
    packed = model.preprocessor.pack_all(texts)
    ids, mask, types = packed["token_ids"], packed["padding_mask"], packed["segment_ids"]
    expected = model.predict_labels(texts)
    for row, words, tags in zip(expected, out["text/words"], out["text/tags"]):
        count = len(row["words"])
        assert list(words[:count]) == row["words"]
        assert list(tags[:count]) == row["tags"]
    assert expected[2]["tags"][-1] == "" and out["text/tag_ids"][2, 10] == -1  # past 10 pieces
    assert not tf_text_ops or not tf_text_ops["tagging"][0]  # probed in a fresh process
    from electra_tf.finetuning.predict import open_predictor

    rows = open_predictor(folder)(texts)
    assert [r["tags"] for r in rows] == [r["tags"] for r in expected]
    assert [r["words"] for r in rows] == [r["words"] for r in expected]
    keras_logits = model.predict_on_batch(dict(token_ids=ids, padding_mask=mask, segment_ids=types))
    real = np.asarray(mask) > 0  # the export skips padding: its rows get the head on zeros
    assert (~real).sum() > 0
    np.testing.assert_allclose(out["ids/outputs"][real], keras_logits[real], atol=1e-5)
    np.testing.assert_allclose(out["ids/outputs"][~real], [[0.02, 0.01, 0.0]] * (~real).sum())


@pytest.mark.parametrize("served", FRESH[:1], indirect=True)
def test_the_text_exports_hold_no_broadcast_batched_matmul(served):
    """The batched matmul oneDNN gets wrong (a broadcast operand: test_onednn_forms.py) is in
    none of the four exports; each holds attention's products, of one rank and batch."""
    from test_onednn_forms import broadcast_batched_matmuls

    for kind, (_, folder, _, _) in served[0].items():
        (saved_model_pb,) = folder.rglob("saved_model.pb")
        found, read = broadcast_batched_matmuls(saved_model_pb)
        assert read > 0 and not found, (kind, found)


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


def test_the_signatures_are_traced_without_autograph(tmp_path):
    """Every serving signature, and the pass `export --xla` compiles, is a `tf.function`
    without AutoGraph (about half an export's time went to converting their call tree); that
    they answer as the Keras model is checked above and in test_task_export_xla.py."""
    model = _tagger()
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{t}\n" for t in TOKENS))
    for jit_compile in (False, True):
        module = TaskServingModule(model, str(vocab), jit_compile=jit_compile)
        functions = {"serve_text": module.serve_text, "serve": module.serve,
                     "serve_examples": module.serve_examples}  # fmt: skip
        if jit_compile:
            functions["forward"] = module._forward
        assert {name: f._autograph for name, f in functions.items()} == dict.fromkeys(
            functions, False
        ), jit_compile
