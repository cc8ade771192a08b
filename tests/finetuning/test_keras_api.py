"""The Keras API as a user meets it (issue 56, cases 8 and 8b): `import electra_tf` alone
lets `keras.saving.load_model` find the task classes, every public task class is importable
from `electra_tf`, and `fit`/`evaluate` take every documented input form, label names in a
`tf.data.Dataset` included, with the compiled metrics seeing the same targets as the loss."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from test_text_classifier import TOKENS, _encoder, _reviews, _sentences

from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor


def _classifier(**kwargs):
    preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=32)
    return ElectraTextClassifier(_encoder(), preprocessor=preprocessor, **kwargs)


_LOAD = """
import sys, json
{first}
model = keras.saving.load_model(sys.argv[1])
print(json.dumps([type(model).__name__, model.labels,
                  model.predict(["good movie", "the plot was bad"]).tolist()]))
"""


# Keras imported after, before, or by TensorFlow's own import (which imports Keras).
_ORDERS = ("import electra_tf\nimport keras", "import keras\nimport electra_tf",
           "import electra_tf\nimport tensorflow\nimport keras")  # fmt: skip


def test_import_electra_tf_alone_lets_keras_load_a_saved_task_model(tmp_path):
    """One fresh process, electra_tf imported first; the full form, one process for each
    import order, is test_import_electra_tf_alone_lets_keras_load_a_saved_task_model_any_order."""
    _load_in_fresh_processes(tmp_path, _ORDERS[:1])


@pytest.mark.slow
def test_import_electra_tf_alone_lets_keras_load_a_saved_task_model_any_order(tmp_path):
    _load_in_fresh_processes(tmp_path, _ORDERS)


def _load_in_fresh_processes(tmp_path, orders):
    """A saved classifier loads with `keras.saving.load_model` and predicts as saved, in a
    fresh process for each import order in `orders`."""
    # Case 8: load_model failed until electra_tf.tasks.registry.load_kinds() was called.
    keras.utils.set_random_seed(0)
    model = _classifier(labels=["neg", "pos"])
    saved = model.predict(["good movie", "the plot was bad"])
    model.save(tmp_path / "m.keras")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    argv = [[sys.executable, "-c", _LOAD.format(first=first), str(tmp_path / "m.keras")]
            for first in orders]  # fmt: skip
    children = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env) for a in argv]  # fmt: skip
    for first, child in zip(orders, children, strict=True):
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, (first, err[-2000:])
        name, labels, logits = json.loads(out.strip().splitlines()[-1])
        assert name == "ElectraTextClassifier" and labels == ["neg", "pos"], first
        np.testing.assert_allclose(logits, saved, atol=1e-6)


def test_the_public_task_classes_import_from_the_package_and_every_class_has_a_stand_in():
    import electra_tf
    from electra_tf._keras_names import CLASSES
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.registry import load_kinds

    assert electra_tf.ElectraQuestionAnswerer is ElectraQuestionAnswerer
    for name in ("ElectraTextClassifier", "ElectraTokenClassifier",
                 "ElectraTextClassifierPreprocessor", "ElectraTokenClassifierPreprocessor",
                 "ElectraQuestionAnswererPreprocessor"):  # fmt: skip
        assert getattr(electra_tf, name).__name__ == name
        assert name in electra_tf.__all__
    import electra_tf.pretraining.pretrainer  # noqa: F401  (registers the rest)

    load_kinds()
    registered = {
        key.split(">", 1)[1]: value
        for key, value in keras.saving.get_custom_objects().items()
        if key.startswith("electra_tf>") and isinstance(value, type)
    }
    assert set(registered) == set(CLASSES)
    assert all(cls.__module__ == CLASSES[name] for name, cls in registered.items())


def _accuracy(model, x, gold):
    return float(np.mean(np.argmax(model.predict(x), -1) == model.encode_labels(gold)))


def test_a_classifier_fits_and_evaluates_on_every_documented_input_form():
    # Case 8b: a Dataset of (texts, label names) failed in the compiled accuracy: "Cast
    # string to float is not supported"; evaluate took no text at all.
    keras.utils.set_random_seed(0)
    texts, labels = _reviews(32, 0)
    model = _classifier(labels=["neg", "pos"])
    ids = model.encode_labels(labels)
    forms = {
        "names": tf.data.Dataset.from_tensor_slices((texts, labels)).batch(8),
        "ids": tf.data.Dataset.from_tensor_slices((texts, ids)).batch(8),
        "pairs": tf.data.Dataset.from_tensor_slices(((texts, texts), labels)).batch(8),
    }
    history = model.fit(forms["names"], epochs=1, verbose=0, validation_data=forms["ids"])
    assert set(history.history) >= {"loss", "accuracy", "val_loss", "val_accuracy"}
    model.fit(texts, labels, epochs=1, batch_size=8, verbose=0,
              validation_data=forms["names"])  # fmt: skip
    expected = _accuracy(model, texts, labels)
    for name in ("names", "ids"):
        loss, accuracy = model.evaluate(forms[name], verbose=0)
        assert accuracy == pytest.approx(expected), name
    loss_lists, accuracy = model.evaluate(texts, labels, batch_size=8, verbose=0)
    assert accuracy == pytest.approx(expected) and loss_lists == pytest.approx(loss, rel=1e-5)
    pair_accuracy = model.evaluate(forms["pairs"], verbose=0)[1]
    assert pair_accuracy == pytest.approx(_accuracy(model, (texts, texts), labels))
    assert model.evaluate((texts, texts), labels, verbose=0)[1] == pytest.approx(pair_accuracy)
    logits = model.predict(texts)
    for name in ("ids", "pairs"):  # the targets ignored, as Keras's predict ignores them
        inputs = (texts, texts) if name == "pairs" else texts
        np.testing.assert_allclose(model.predict(forms[name]), model.predict(inputs), atol=1e-5)
    only_texts = tf.data.Dataset.from_tensor_slices(texts).batch(8)
    np.testing.assert_allclose(model.predict(only_texts), logits, atol=1e-5)
    bad = tf.data.Dataset.from_tensor_slices((texts[:4], ["neg", "pos", "meh", "neg"])).batch(4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not one of"):
        model.evaluate(bad, verbose=0)


def test_multi_label_names_in_a_dataset_become_multi_hot_rows():
    keras.utils.set_random_seed(1)
    texts = ["good movie", "bad plot", "the plot was good", "awful"]
    names = [["pos"], ["neg", "plot"], ["pos", "plot"], []]
    model = _classifier(labels=["neg", "pos", "plot"], kind="multi_label")
    ragged = tf.data.Dataset.from_tensor_slices((texts, tf.ragged.constant(names))).batch(2)
    padded = [row + [""] * (2 - len(row)) for row in names]
    dense = tf.data.Dataset.from_tensor_slices((texts, padded)).batch(2)
    model.fit(ragged, epochs=1, verbose=0)
    expected = model.evaluate(texts, names, verbose=0)
    hot = model.spec.graph_targets(model.labels, tf.constant(padded)).numpy()
    assert hot.tolist() == model.encode_labels(names).tolist()
    for dataset in (ragged, dense):
        np.testing.assert_allclose(model.evaluate(dataset, verbose=0), expected, rtol=1e-5)


def test_a_tagger_fits_and_evaluates_on_tag_names_in_a_dataset():
    keras.utils.set_random_seed(2)
    sentences = _sentences(16, 0)
    words = [list(s.words) for s in sentences]
    tags = [list(s.label) for s in sentences]
    preprocessor = ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=32)
    tagger = ElectraTokenClassifier(_encoder(), ["B-LOC", "B-PER", "O"], preprocessor)
    texts = [" ".join(w) for w in words]
    forms = [
        tf.data.Dataset.from_tensor_slices((texts, tf.ragged.constant(tags))).batch(8),
        tf.data.Dataset.from_tensor_slices(
            (tf.ragged.constant(words), tf.ragged.constant(tagger.encode_tags(tags)))
        ).batch(8),
    ]
    history = tagger.fit(forms[0], epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    expected = tagger.evaluate(words, tags, verbose=0)
    for dataset in forms:
        assert tagger.evaluate(dataset, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_compile_defaults_choose_the_auto_optimizer_and_batch_order_of_a_recipe():
    """`compile(defaults=...)`: the "auto" optimizer `fit` makes and `fit`'s batch order.
    Standard (the default): no warmup (step 0 at the peak rate), epsilon 1e-8, every layer at
    the peak, random batches; paper: 10% warmup (step 0 at rate 0), epsilon 1e-6, layer-wise
    factors 0.8 ** (layers + 1 - depth), batches grouped by length. An unknown name is one
    sentence."""
    from electra_tf.config import ConfigError
    from electra_tf.tasks.config import PAPER_LEARNING_RATE

    peak = PAPER_LEARNING_RATE["tiny"]  # a hidden-16 encoder's
    seen = {}
    for recipe in ("standard", "paper"):
        model = _classifier(labels=["neg", "pos"])
        if recipe == "paper":
            model.compile(defaults="paper")
        model.prepare_fit(steps_per_epoch=10, epochs=1)
        optimizer = model.optimizer
        factors = sorted(set(optimizer._multipliers_by_id.values()))
        seen[recipe] = (optimizer.epsilon, float(optimizer.learning_rate), factors,
                        model.grouped(None), model.grouped(False))  # fmt: skip
    assert seen["standard"] == (1e-8, pytest.approx(peak), [1.0], False, False)
    assert seen["paper"][:2] == (1e-6, 0.0)
    assert seen["paper"][2] == pytest.approx([0.8**2, 0.8, 1.0])  # embeddings, block, head
    assert seen["paper"][3:] == (True, False)
    with pytest.raises(ConfigError, match='defaults must be "standard" or "paper", got \'bert\''):
        _classifier(labels=["neg", "pos"]).compile(defaults="bert")
