"""Child of test_onednn_forms.py: a joint-head question-answering model with `beam_size=1`
exported and served, 20 calls on contexts of several windows, then every malloc arena
consolidated (a corrupted heap aborts there). Prints whether the SavedModel's answers are
the Keras model's. Usage: qa_beam_one_child.py OUT_DIR."""

import ctypes
import gc
import json
import sys

import keras
import numpy as np
import tensorflow as tf

from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.export import export_finetuned
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
from electra_tf.tasks.question_answerer_preprocessor import ElectraQuestionAnswererPreprocessor

WORDS = "where does ada bob live lives in rome paris who the food was good what".split()


def main(out_dir):
    tokens = [*SPECIAL_TOKENS, *WORDS, "."]
    keras.utils.set_random_seed(3)
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=1, hidden_dim=16,
        embedding_dim=16, num_heads=2, intermediate_dim=32, max_sequence_length=32)  # fmt: skip
    preprocessor = ElectraQuestionAnswererPreprocessor(
        tokens, sequence_length=24, doc_stride=6, max_query_length=8
    )
    model = ElectraQuestionAnswerer(
        encoder, preprocessor, n_best=5, max_answer_length=4, joint_end=True, beam_size=1
    )
    model.build()
    rng = np.random.default_rng(0)
    questions = [" ".join(rng.choice(WORDS, size=3)) for _ in range(8)]
    contexts = [" ".join(rng.choice(WORDS, size=40)) for _ in range(8)]  # 7 windows each
    expected = [w["answer"] for w in model.predict_answers(questions, contexts)]
    folder = export_finetuned(model, {"pair": True}, out_dir, model_name="qa", warmup=False)
    served = tf.saved_model.load(str(folder)).signatures["serving_default"]
    for _ in range(20):
        got = served(question=tf.constant(questions), context=tf.constant(contexts))
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    answers = [a.decode() for a in got["answer"].numpy()]
    print(json.dumps({"folder": str(folder), "answers": answers, "expected": expected}))


if __name__ == "__main__":
    main(sys.argv[1])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
