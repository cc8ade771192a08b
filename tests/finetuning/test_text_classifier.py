"""The Keras way: ElectraTextClassifier and ElectraTokenClassifier fit, predict and save on text."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.datasets.conll import TaggedSentence
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.optimizer import LayerwiseAdamW
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

GOOD, BAD = ["good", "great", "fine"], ["bad", "awful", "poor"]
FILLER = ["the", "movie", "was", "plot", "very", "and"]
PEOPLE, PLACES = ["ada", "bob", "eve"], ["rome", "paris", "oslo"]
TOKENS = list(SPECIAL_TOKENS) + GOOD + BAD + FILLER + PEOPLE + PLACES + ["in", "met", "##s"]


def _encoder(layers=1):
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=layers, hidden_dim=16, embedding_dim=16,
        num_heads=2, intermediate_dim=32, max_sequence_length=32, dropout=0.0,
    )  # fmt: skip


def _reviews(n, seed):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        positive = rng.random() < 0.5
        words = list(rng.choice(FILLER, size=rng.integers(1, 12)))
        words.insert(int(rng.integers(len(words) + 1)), rng.choice(GOOD if positive else BAD))
        texts.append(" ".join(words))
        labels.append("pos" if positive else "neg")
    return texts, labels


def _classifier(**kwargs):
    preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=32)
    return ElectraTextClassifier(_encoder(), preprocessor=preprocessor, **kwargs)


def test_a_classifier_learns_from_strings_and_round_trips_through_a_keras_file(tmp_path):
    """Its SavedModel served in this process (a classifier's export served in a process
    without electra_tf: test_round_trip.py); the full form, served in a fresh process, is
    test_a_classifier_learns_from_strings_and_round_trips_through_a_fresh_process."""
    _learns_and_round_trips(tmp_path, fresh_process=False)


@pytest.mark.slow
def test_a_classifier_learns_from_strings_and_round_trips_through_a_fresh_process(tmp_path):
    _learns_and_round_trips(tmp_path, fresh_process=True)


def _serve_here(folder, texts):
    """Per text, the export's `serving_default` label, served in this process."""
    served = tf.saved_model.load(str(folder)).signatures["serving_default"]
    labels = served(text=tf.constant(texts))["label"].numpy()
    return [{"text": t, "label": label.decode()} for t, label in zip(texts, labels, strict=True)]


def _learns_and_round_trips(tmp_path, fresh_process):
    """Learns from strings; predicts in input order; a keras file, its SavedModel (in a fresh
    process, or this one) and a loaded model training on."""
    keras.utils.set_random_seed(0)
    texts, labels = _reviews(320, 0)
    dev_texts, dev_labels = _reviews(100, 1)
    model = _classifier(labels=["neg", "pos"])
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = model.fit(texts, labels, epochs=4, batch_size=16, seed=0, verbose=0,
                        validation_data=(dev_texts, dev_labels))  # fmt: skip
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    predicted = [row["label"] for row in model.predict_labels(dev_texts)]
    assert np.mean(np.asarray(predicted) == np.asarray(dev_labels)) > 0.9
    # Length-sorted batches come back in input order: each row as if predicted alone.
    logits = model.predict(dev_texts[:7], batch_size=3)
    alone = np.concatenate([model.predict([t]) for t in dev_texts[:7]])
    np.testing.assert_allclose(logits, alone, atol=1e-5)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(loaded, ElectraTextClassifier) and loaded.labels == ["neg", "pos"]
    assert loaded.preprocessor.vocabulary == TOKENS
    np.testing.assert_allclose(loaded.predict(dev_texts), model.predict(dev_texts), atol=1e-6)
    # Served from its SavedModel in a fresh process, the same labels.
    from electra_tf.serving.fresh_process import classify_in_fresh_process
    from electra_tf.tasks.export import export_finetuned

    info = {"kind": "classification", "labels": loaded.labels, "pair": False}
    folder = export_finetuned(loaded, info, tmp_path / "serving", model_name="reviews")
    serve = classify_in_fresh_process if fresh_process else _serve_here
    served = serve(folder, dev_texts[:5])
    assert [row["label"] for row in served] == predicted[:5]
    # A loaded model trains on.
    loaded.compile(optimizer=keras.optimizers.Adam(1e-3))
    loaded.fit(texts[:32], labels[:32], epochs=1, verbose=0)


def test_the_auto_optimizer_is_the_papers_layerwise_schedule():
    keras.utils.set_random_seed(1)
    texts, labels = _reviews(64, 2)
    model = _classifier(labels=["neg", "pos"])
    model.compile(defaults="paper")  # compile() alone: the standard recipe (test_keras_api)
    model.fit(texts, labels, epochs=2, batch_size=16, verbose=0)
    assert isinstance(model.optimizer, LayerwiseAdamW)
    assert int(model.optimizer.iterations.numpy()) == 8
    schedule = model.optimizer._learning_rate
    assert schedule.total_steps == 8 and schedule.warmup_steps == 0  # 10% of 8
    assert model.optimizer._multiplier(model.output_dense.kernel) == 1.0
    embedding = model.encoder.embeddings.trainable_variables[0]
    assert model.optimizer._multiplier(embedding) == pytest.approx(0.8**2)  # one block, top 2


def test_pairs_multi_label_regression_and_bad_labels():
    pair = _classifier(labels=["a", "b", "c"])
    packed = pair.preprocessor((["good movie"], ["bad plot and"]))
    assert packed["segment_ids"].numpy().tolist() == [[0, 0, 0, 0, 1, 1, 1, 1]]
    assert pair.predict((["good movie", "bad"], ["x", "the plot"])).shape == (2, 3)
    with pytest.raises(ValueError, match="Label 'd' is not one of"):
        pair.encode_labels(["a", "d"])
    multi = _classifier(labels=["news", "sport"], kind="multi_label")
    assert multi.encode_labels([["sport"], ["news", "sport"], []]).tolist() == [
        [0, 1], [1, 1], [0, 0]
    ]  # fmt: skip
    decoded = multi.decode(np.array([[2.0, -1.0], [-3.0, -2.0]]))
    assert decoded[0]["labels"] == ["news"] and decoded[1]["labels"] == []
    assert decoded[0]["probabilities"]["news"] == pytest.approx(1 / (1 + np.exp(-2.0)))
    regression = _classifier(kind="regression")
    assert regression.predict(["good", "the plot was bad"]).shape == (2,)
    assert regression.decode(np.array([0.25]))[0] == {"score": 0.25}
    with pytest.raises(ValueError, match="needs its label names"):
        _classifier(kind="classification")


def test_a_dataset_of_strings_is_preprocessed_batch_by_batch():
    keras.utils.set_random_seed(2)
    texts, labels = _reviews(96, 3)
    model = _classifier(labels=["neg", "pos"])
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    ids = model.encode_labels(labels)
    dataset = tf.data.Dataset.from_tensor_slices((texts, ids)).batch(16)
    history = model.fit(dataset, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    strings = tf.data.Dataset.from_tensor_slices(texts[:20]).batch(8)
    np.testing.assert_allclose(model.predict(strings), model.predict(texts[:20]), atol=1e-5)


def _sentences(n, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        person, place = rng.choice(PEOPLE), rng.choice(PLACES)
        words = [str(person), "met", str(rng.choice(PEOPLE)), "in", str(place)]
        tags = ["B-PER", "O", "B-PER", "O", "B-LOC"]
        if rng.random() < 0.5:
            words, tags = words[3:] + words[:3], tags[3:] + tags[:3]
        rows.append(TaggedSentence(tuple(words), tuple(tags)))
    return rows


def test_a_tagger_learns_per_word_tags_and_round_trips(tmp_path):
    keras.utils.set_random_seed(3)
    train, dev = _sentences(200, 4), _sentences(40, 5)
    labels = ["B-LOC", "B-PER", "O"]
    preprocessor = ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=32)
    tagger = ElectraTokenClassifier(_encoder(2), labels, preprocessor, dropout=0.0)
    tagger.compile(optimizer=keras.optimizers.Adam(5e-3))
    tagger.fit([list(s.words) for s in train], [list(s.label) for s in train], epochs=6,
               batch_size=16, seed=0, verbose=0)  # fmt: skip
    rows = tagger.predict_labels([" ".join(s.words) for s in dev])
    correct = [p == g for row, s in zip(rows, dev) for p, g in zip(row["tags"], s.label)]
    assert np.mean(correct) > 0.95 and rows[0]["words"] == list(dev[0].words)
    # "parises" is two pieces (paris ##es is not in the vocabulary: [UNK]... ), one tag.
    assert len(tagger.predict_labels(["ada met bob in oslos"])[0]["tags"]) == 5
    tagger.save(tmp_path / "t.keras")
    loaded = keras.saving.load_model(tmp_path / "t.keras")
    assert loaded.labels == labels
    assert loaded.predict_labels(["eve in rome"]) == tagger.predict_labels(["eve in rome"])


def test_fit_traces_the_train_step_once_and_trains_the_same_weights(monkeypatch):
    """The compiled loss and metrics are built before `fit` (`build_compiled_state`), so their
    variables no longer make `tf.function` trace the train step a second time; the weights
    come out the same as when the first step builds them."""
    texts, labels = _reviews(48, 0)

    def trained(build_first: bool):
        if not build_first:
            monkeypatch.setattr(ElectraTextClassifier, "build_compiled_state", lambda self, d: None)
        keras.utils.set_random_seed(3)
        model = _classifier(labels=["neg", "pos"])
        model.compile(optimizer=keras.optimizers.Adam(1e-3))
        traces = []
        step = model.train_step
        model.train_step = lambda data: (traces.append(1), step(data))[1]
        model.fit(texts, labels, epochs=2, batch_size=8, seed=1, verbose=0)
        monkeypatch.undo()
        return len(traces), [w.numpy() for w in model.weights]

    once, built_first = trained(True)
    twice, built_in_step = trained(False)
    assert (once, twice) == (1, 2)
    for x, y in zip(built_first, built_in_step, strict=True):
        np.testing.assert_array_equal(x, y)
