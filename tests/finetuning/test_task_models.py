"""The Keras task models off the happy path: every input builds the paper's optimizer, a
second fit trains, targets keep their width, cut words are said, padding follows pad_to."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from test_text_classifier import TOKENS, _encoder, _reviews

from electra_tf.data.batching import batch_dataset
from electra_tf.tasks.optimizer import LayerwiseAdamW
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor


def _classifier(pad_to="longest", sequence_length=32, **kwargs):
    preprocessor = ElectraTextClassifierPreprocessor(
        TOKENS, sequence_length=sequence_length, pad_to=pad_to
    )
    return ElectraTextClassifier(_encoder(), preprocessor=preprocessor, **kwargs)


def _schedule(model):
    schedule = model.optimizer._learning_rate
    return type(model.optimizer), schedule.total_steps, schedule.warmup_steps, schedule.offset


def test_a_pair_dataset_builds_the_papers_optimizer():
    """One of the five inputs, a Dataset of pairs (defect 1's case), against the worked-out
    schedule; strings get the same in test_text_classifier.py's
    `test_the_auto_optimizer_is_the_papers_layerwise_schedule`. The full form, all five
    (strings, pairs, ids, a Dataset, a Dataset of pairs), each its own model and traced train
    step: `test_strings_pairs_ids_and_datasets_build_the_same_papers_optimizer`."""
    _build_the_same_papers_optimizer(("pair dataset",))


@pytest.mark.slow
def test_strings_pairs_ids_and_datasets_build_the_same_papers_optimizer():
    # Defect 1: a Dataset trained with plain Adam at 1e-3 (no warmup, decay or layer-wise rates).
    _build_the_same_papers_optimizer(("strings", "pairs", "ids", "dataset", "pair dataset"))


def _build_the_same_papers_optimizer(names):
    """Per input kind of `names`, a fresh model fits 2 epochs of 64 texts with the paper's
    defaults: each gets the same LayerwiseAdamW schedule (8 steps, no warmup, from 0)."""
    texts, labels = _reviews(64, 7)
    built = {}
    for name in names:
        keras.utils.set_random_seed(0)
        model = _classifier(labels=["neg", "pos"])
        model.compile(defaults="paper")  # its layer-wise factors tell the auto optimizer apart
        ids = model.encode_labels(labels)
        if name == "strings":
            model.fit(texts, labels, epochs=2, batch_size=16, verbose=0)
        elif name == "pairs":
            model.fit((texts, texts), labels, epochs=2, batch_size=16, verbose=0)
        elif name == "ids":
            model.fit(model.preprocessor.pack_all(texts), ids, epochs=2, batch_size=16, verbose=0)
        elif name == "dataset":
            model.fit(tf.data.Dataset.from_tensor_slices((texts, ids)).batch(16), epochs=2,
                      verbose=0)  # fmt: skip
        else:
            pairs = tf.data.Dataset.from_tensor_slices(((texts, texts), ids)).batch(16)
            model.fit(pairs, epochs=2, verbose=0)
        built[name] = _schedule(model)
        assert model.optimizer._multiplier(model.output_dense.kernel) == 1.0
        embedding = model.encoder.embeddings.trainable_variables[0]
        assert model.optimizer._multiplier(embedding) == pytest.approx(0.8**2)
        assert int(model.optimizer.iterations.numpy()) == 8
    assert set(built.values()) == {(LayerwiseAdamW, 8, 0, 0)}, built


def test_a_dataset_of_unknown_length_is_asked_for_its_steps():
    model = _classifier(labels=["neg", "pos"])
    texts, labels = _reviews(16, 8)
    unknown = tf.data.Dataset.from_tensor_slices((texts, model.encode_labels(labels)))
    unknown = unknown.filter(lambda t, y: True).batch(8)
    with pytest.raises(ValueError, match="pass steps_per_epoch=N"):
        model.fit(unknown, epochs=1, verbose=0)
    model.fit(unknown, epochs=1, steps_per_epoch=2, verbose=0)
    assert model.optimizer._learning_rate.total_steps == 2


def test_a_second_fit_trains_again_with_its_own_schedule():
    # Defect 2: the first fit's schedule had decayed to 0, so a second fit changed nothing.
    keras.utils.set_random_seed(3)
    texts, labels = _reviews(64, 9)
    model = _classifier(labels=["neg", "pos"])
    model.fit(texts, labels, epochs=1, batch_size=16, verbose=0)
    first = [w.numpy().copy() for w in model.trainable_weights]
    optimizer = model.optimizer
    model.fit(texts, labels, epochs=2, batch_size=16, verbose=0)
    assert _schedule(model) == (LayerwiseAdamW, 8, 0, 4)  # its 8 steps, from step 4
    assert int(model.optimizer.iterations.numpy()) == 12
    moved = max(float(np.abs(w.numpy() - f).max()) for w, f in zip(model.trainable_weights, first))
    assert moved > 1e-4
    assert model.optimizer is optimizer  # its moments carry over
    rate = model.optimizer._learning_rate
    assert float(rate(4)) == pytest.approx(1e-3) and float(rate(8)) == pytest.approx(5e-4)
    assert float(rate(12)) == 0.0  # its own decay to 0 at its own end


def test_multi_hot_targets_as_wide_as_the_sequence_are_not_cut():
    # Defect 7: with as many labels as max_seq_length, targets were cut like token ids.
    labels = [f"l{i}" for i in range(16)]
    model = _classifier(labels=labels, kind="multi_label", sequence_length=16)
    texts = ["good movie", "bad"]
    targets = model.encode_labels([["l0", "l15"], ["l3"]])
    packed = model.preprocessor.pack_all(texts)
    batches = list(batch_dataset(packed, targets, batch_size=2, group=0))
    inputs, cut = batches[0]
    assert inputs["token_ids"].shape[1] == 4 and cut.shape == (2, 16)
    model.fit(texts, [["l0", "l15"], ["l3"]], epochs=1, verbose=0)  # trains (shapes agree)
    per_token = list(batch_dataset(packed, np.zeros((2, 16), "int32"), batch_size=2, group=0,
                                   cut_targets=True))  # fmt: skip
    assert per_token[0][1].shape == (2, 4)


def test_words_past_the_maximum_length_are_counted_and_get_no_tag():
    # Defect 8: cut words came back as tag "" with no count anywhere.
    preprocessor = ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=6)
    tagger = ElectraTokenClassifier(_encoder(), ["O", "B-PER"], preprocessor)
    rows = tagger.predict_labels(["ada met bob in rome paris", "ada"])
    assert rows[0]["words_cut"] == 2 and rows[1]["words_cut"] == 0
    assert rows[0]["tags"][4:] == ["", ""] and rows[0]["probabilities"][4:] == [0.0, 0.0]
    assert all(t in ("O", "B-PER") for t in rows[0]["tags"][:4])


@pytest.mark.parametrize("pad_to, lengths", [("longest", {3, 17}), ("max", {32})])
def test_pad_to_decides_every_batch_length_in_fit_and_predict(pad_to, lengths):
    # Defect 9: pad_to="max" had no effect in fit/predict on strings (XLA retraces per length).
    model = _classifier(labels=["neg", "pos"], pad_to=pad_to)
    seen = []
    forward = model.inference_function()

    def spy(inputs):
        seen.append(int(inputs["token_ids"].shape[1]))
        return forward(inputs)

    object.__setattr__(model, "_inference_function", spy)
    texts = ["good", "the movie was very good and the plot was fine and good and fine fine"]
    model.predict(texts, batch_size=1)
    assert set(seen) == lengths  # "longest": each batch its own longest row

    trained = []
    original = model.train_step

    def recording_step(data):
        trained.append(data[0]["token_ids"].shape[1])
        return original(data)

    model.train_step = recording_step
    model.fit(texts, ["pos", "neg"], batch_size=1, epochs=1, verbose=0)
    # "max": one static shape for the traced step; "longest": the length varies (None).
    assert set(trained) == ({32} if pad_to == "max" else {None})


def test_the_kept_model_folder_holds_no_optimizer_state(tmp_path):
    # Issue 39, case 9: model.keras carried the optimizer's moments (180 of 271 MB).
    import zipfile

    import h5py

    from electra_tf.tasks.model_folder import load_finetuned, write_model_folder

    texts, labels = _reviews(32, 4)
    model = _classifier(labels=["neg", "pos"])
    model.fit(texts, labels, epochs=1, batch_size=16, verbose=0)
    info = {"kind": "classification", "labels": ["neg", "pos"]}
    write_model_folder(model, tmp_path / "model", info)
    with zipfile.ZipFile(tmp_path / "model" / "model.keras") as archive:
        archive.extract("model.weights.h5", tmp_path)
    with h5py.File(tmp_path / "model.weights.h5") as weights:
        names = []
        weights.visit(names.append)
    assert not [n for n in names if n.startswith("optimizer")], names[:5]
    loaded, _ = load_finetuned(tmp_path / "model")
    np.testing.assert_allclose(loaded.predict(texts), model.predict(texts), atol=1e-6)


def test_from_source_builds_the_encoder_and_a_preprocessor_of_its_vocabulary(tmp_path):
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

    tokens = [*SPECIAL_TOKENS, "good", "bad", "ada"]
    vocab = str(write_vocabulary(tokens, tmp_path / "vocab.txt"))
    text = ElectraTextClassifier.from_source(
        "scratch:tiny", labels=["n", "p"], sequence_length=10_000, vocab_file=vocab, pad_to="max"
    )
    cap = text.encoder.max_sequence_length  # at most the encoder's positions
    assert (text.preprocessor.sequence_length, text.preprocessor.pad_to) == (cap, "max")
    assert text.preprocessor.vocabulary == tokens and text.predict(["good", "bad ada"]).shape == (
        2,
        2,
    )
    tagger = ElectraTokenClassifier.from_source(
        "scratch:tiny", ["O", "B-PER"], sequence_length=16, vocab_file=vocab
    )
    assert tagger.preprocessor.sequence_length == 16 and tagger.preprocessor.pad_to == "longest"
    assert len(tagger.predict_labels(["ada good"])[0]["tags"]) == 2


def test_every_layer_of_a_new_task_model_is_built_so_keras_predicts_compiled_only(tmp_path):
    """Keras's JAX `predict_on_batch`, which `predict` uses there, first runs the whole
    model eagerly whenever a layer is not built (a preprocessor never called as a layer
    was not): a second, op-by-op forward pass per batch, `predict` 2.6x slower
    (docs/results/backends.md). Every kind's model is built as made and as loaded."""
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer

    vocab = str(write_vocabulary([*SPECIAL_TOKENS, "good", "bad"], tmp_path / "vocab.txt"))
    models = [
        ElectraTextClassifier.from_source("scratch:tiny", labels=["n", "p"], vocab_file=vocab),
        ElectraTokenClassifier.from_source("scratch:tiny", ["O", "B-X"], vocab_file=vocab),
        ElectraQuestionAnswerer.from_source("scratch:tiny", sequence_length=32, vocab_file=vocab),
    ]
    path = tmp_path / "text.keras"
    models[0].save(path)
    models.append(keras.saving.load_model(path))
    for model in models:
        assert [layer.name for layer in model._flatten_layers() if not layer.built] == []
        assert model.preprocessor.built


def test_on_jax_longest_rounds_batch_lengths_up_to_a_quarter_of_the_full_length(monkeypatch):
    """XLA compiles a program for each new batch length: on JAX (the backend's name faked
    here) "longest" rounds every batch length up to a quarter of `sequence_length`, in
    `predict`, in packed batches and in the preprocessor's own cut; elsewhere it is 1
    (the longest row) in packed batches and 8 in the preprocessor."""
    from electra_tf.tasks import text_classifier_preprocessor as preprocessing

    texts = ["good", "the movie was very good and the plot was fine and good and fine fine"]
    lengths = {}
    for backend in ("tensorflow", "jax"):
        monkeypatch.setattr(preprocessing, "_backend", lambda backend=backend: backend)
        model = _classifier(labels=["neg", "pos"], sequence_length=64)
        forward, seen = model.inference_function(), []

        def spy(inputs, forward=forward, seen=seen):
            seen.append(int(inputs["token_ids"].shape[1]))
            return forward(inputs)

        object.__setattr__(model, "_inference_function", spy)
        model.predict(texts, batch_size=1)
        cut = [int(model.preprocessor([text])["token_ids"].shape[1]) for text in texts]
        lengths[backend] = (model.packed_batch_multiple(), sorted(seen), cut)
    assert lengths["tensorflow"] == (1, [3, 17], [8, 24])
    assert lengths["jax"] == (16, [16, 32], [16, 32])
    assert [preprocessing.length_multiple(n) for n in (32, 100, 128, 512)] == [8, 32, 32, 128]


def test_on_jax_predict_rounds_batch_rows_up_to_a_power_of_two_and_drops_the_repeats(
    monkeypatch, tmp_path
):  # fmt: skip
    """XLA compiles a program for each new batch shape, and a call's last batch may have
    any row count: on JAX (the backend's name faked here, the forward pass TensorFlow's)
    `predict` rounds each batch's rows up to a power of two (at most `batch_size`) by
    repeating its last row and drops the repeats' outputs, for every kind; elsewhere a
    batch keeps its own rows. The outputs are the same either way."""
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
    from electra_tf.tasks import text_classifier_preprocessor as preprocessing
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer, window_outputs
    from electra_tf.tasks.question_answerer_preprocessor import as_examples

    vocab = str(write_vocabulary([*SPECIAL_TOKENS, "good", "bad", "x"], tmp_path / "v.txt"))
    keras.utils.set_random_seed(3)
    models = {
        "text": ElectraTextClassifier.from_source("scratch:tiny", ["n", "p"], vocab_file=vocab),
        "tags": ElectraTokenClassifier.from_source("scratch:tiny", ["O", "B"], vocab_file=vocab),
        "qa": ElectraQuestionAnswerer.from_source(
            "scratch:tiny", sequence_length=32, vocab_file=vocab
        ),
    }
    texts = [" ".join(["good", "bad", "x"][: 1 + i % 3] * (1 + i)) for i in range(11)]

    def windows(n):
        examples, _ = as_examples(["good"] * n, texts[:n])
        return models["qa"].preprocessor.windows(examples).inputs

    calls = {
        "text": lambda m, n: m.predict(texts[:n], batch_size=8),
        "tags": lambda m, n: m.word_logits(texts[:n], batch_size=8)[1],
        "qa": lambda m, n: np.where(  # real tokens only: padding's cut differs
            windows(n)["padding_mask"] > 0, window_outputs(m, windows(n), 8)["start_logits"], 0
        ),
    }
    for kind, model in models.items():
        results, rows = {}, {}
        for backend in ("tensorflow", "jax"):
            monkeypatch.setattr(preprocessing, "_backend", lambda backend=backend: backend)
            object.__setattr__(model, "_inference_function", None)
            forward, seen = model.inference_function(), []

            def spy(inputs, forward=forward, seen=seen):
                seen.append(int(inputs["token_ids"].shape[0]))
                return forward(inputs)

            object.__setattr__(model, "_inference_function", spy)
            results[backend] = [np.asarray(calls[kind](model, n)) for n in (5, 3, 1, 11)]
            rows[backend] = seen
        if kind != "qa":  # a question's context may take several windows (rows)
            assert rows["tensorflow"] == [5, 3, 1, 8, 3], kind
        assert rows["jax"] == [min(8, 1 << (n - 1).bit_length()) for n in rows["tensorflow"]]
        assert rows["jax"] != rows["tensorflow"], kind
        for ours, theirs in zip(results["jax"], results["tensorflow"], strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5, err_msg=kind)


def test_the_kept_models_twin_holds_the_trained_weights_and_no_optimizer():
    """`without_optimizer` builds its twin without drawing initial values (each weight is
    then set from the trained model's): the twin predicts as the model does."""
    from electra_tf.tasks.model_folder import without_optimizer

    keras.utils.set_random_seed(4)
    texts, labels = _reviews(32, 5)
    model = _classifier(labels=["neg", "pos"])
    model.fit(texts, labels, epochs=1, batch_size=16, verbose=0)
    twin = without_optimizer(model)
    assert twin is not model and getattr(twin, "optimizer", None) is None
    assert [w.shape for w in twin.weights] == [w.shape for w in model.weights]
    for mine, theirs in zip(twin.weights, model.weights, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    np.testing.assert_allclose(twin.predict(texts[:8]), model.predict(texts[:8]), atol=1e-6)
