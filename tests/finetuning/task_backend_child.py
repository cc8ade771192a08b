"""Run by test_task_backends.py under KERAS_BACKEND=jax or torch (or in-process on TensorFlow).

`python task_backend_child.py WEIGHTS_DIR OUT` builds test_text_classifier.py's classifier
and tagger and test_question_answering.py's question answerer, loads the weights
TensorFlow saved in WEIGHTS_DIR, predicts, fits two epochs on raw strings with the task
classes' own defaults (the "auto" optimizer, seeded batch order), evaluates and predicts
again, and saves each model as `WEIGHTS_DIR/<name>.<backend>.keras`; OUT (npz) holds the
predictions before and after, the evaluations (the classifier's also of a `tf.data`
dataset of strings) and every weight after, and off TensorFlow
the sentence that refuses a SavedModel export there.
"""

from __future__ import annotations

import gc
import sys

import keras
import numpy as np
import tensorflow as tf
from test_question_answering import WORDS, _toy
from test_text_classifier import TOKENS, _encoder, _reviews, _sentences

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.export import export_finetuned
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
from electra_tf.tasks.question_answerer_preprocessor import ElectraQuestionAnswererPreprocessor
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

TAGS = ["B-LOC", "B-PER", "O"]
QA_TOKENS = [*SPECIAL_TOKENS, *WORDS, "."]


def models() -> dict:
    """The classifier and the tagger, built (random weights, dropout 0)."""
    keras.utils.set_random_seed(0)
    preprocessor = ElectraTextClassifierPreprocessor(TOKENS, sequence_length=32)
    classifier = ElectraTextClassifier(
        _encoder(), preprocessor=preprocessor, labels=["neg", "pos"], dropout=0.0
    )
    tagger = ElectraTokenClassifier(
        _encoder(), TAGS, ElectraTokenClassifierPreprocessor(TOKENS, sequence_length=32),
        dropout=0.0,
    )  # fmt: skip
    encoder = ElectraEncoder(
        vocabulary_size=len(QA_TOKENS), num_layers=1, hidden_dim=16, embedding_dim=16,
        num_heads=2, intermediate_dim=32, max_sequence_length=32, dropout=0.0,
    )  # fmt: skip
    answerer = ElectraQuestionAnswerer(
        encoder, ElectraQuestionAnswererPreprocessor(QA_TOKENS, sequence_length=32)
    )
    classifier.predict(["good movie"])
    tagger.word_logits(["ada met bob"])
    answerer.build()
    return {"classifier": classifier, "tagger": tagger, "answerer": answerer}


def data() -> dict:
    """Each model's training and prediction inputs."""
    texts, labels = _reviews(48, 0)
    sentences = _sentences(24, 0)
    words = [list(s.words) for s in sentences]
    rows = _toy(48, 0)
    questions, contexts = [r["question"] for r in rows], [r["context"] for r in rows]
    answers = [r["answers"] for r in rows]
    return {
        "answerer": (((questions, contexts), answers), (questions[:8], contexts[:8])),
        "classifier": ((texts, labels), _reviews(16, 1)[0]),
        "tagger": ((words, [list(s.label) for s in sentences]), [" ".join(w) for w in words[:8]]),
    }


def outputs(model, inputs) -> np.ndarray:
    """The classifier's logits, the tagger's per-word logits (padding zeroed), or per
    question the answerer's best span score, no-answer score and answer's offsets."""
    if isinstance(model, ElectraQuestionAnswerer):
        rows = model.predict_answers(*inputs)
        return np.array([[r["score"], r["no_answer"], r["start"], r["end"]] for r in rows])
    if isinstance(model, ElectraTokenClassifier):
        mask, logits = model.word_logits(inputs)
        return np.asarray(logits) * np.asarray(mask)[..., None]
    return np.asarray(model.predict(inputs))


def run(weights_dir, out) -> None:
    arrays = {}
    for name, model in models().items():
        model.load_weights(f"{weights_dir}/{name}.weights.h5")
        (x, y), inputs = data()[name]
        arrays[f"{name}.before"] = outputs(model, inputs)
        model.fit(x, y, epochs=2, batch_size=8, seed=3, verbose=0)
        if name != "answerer":  # its metrics are the answer search's, not Keras's
            arrays[f"{name}.evaluate"] = np.asarray(model.evaluate(x, y, verbose=0))
        arrays[f"{name}.after"] = outputs(model, inputs)
        if name == "classifier":  # the preprocessor inside tf.data, on every backend
            dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
            arrays["classifier.dataset_evaluate"] = np.asarray(model.evaluate(dataset, verbose=0))
        model.save(f"{weights_dir}/{name}.{keras.config.backend()}.keras")
        for index, weight in enumerate(model.get_weights()):
            arrays[f"{name}.weight.{index:03d}"] = np.asarray(weight)
    if keras.config.backend() != "tensorflow":  # the SavedModel is TensorFlow's to write
        try:
            export_finetuned(model, {"kind": "question_answering"}, f"{weights_dir}/export")
        except ConfigError as refusal:
            arrays["export_refusal"] = np.array(str(refusal))
    np.savez(out, backend=keras.config.backend(), **arrays)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
