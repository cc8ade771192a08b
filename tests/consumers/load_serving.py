"""A consumer of the TF Serving export in a fresh process that never imports electra_tf.

Usage: python load_serving.py VERSION_DIR INPUTS.npz OUTPUTS.npz
"""

import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401 - registers the text ops the raw-text signatures use

assert "electra_tf" not in sys.modules
folder, inputs_path, outputs_path = sys.argv[1:4]
inputs = np.load(inputs_path)
loaded = tf.saved_model.load(folder)
assert "electra_tf" not in sys.modules
results = {}
ids = loaded.signatures["serving_default"](
    input_word_ids=tf.constant(inputs["input_word_ids"]),
    input_mask=tf.constant(inputs["input_mask"]),
    input_type_ids=tf.constant(inputs["input_type_ids"]),
)
for key, value in ids.items():
    results[f"ids/{key}"] = value.numpy()
text = loaded.signatures["serve_text"](text=tf.constant([str(t) for t in inputs["texts"]]))
for key, value in text.items():
    results[f"text/{key}"] = value.numpy()
pair = loaded.signatures["serve_text_pair"](
    text_a=tf.constant([str(t) for t in inputs["texts"]]),
    text_b=tf.constant([str(t) for t in inputs["texts_b"]]),
)
for key, value in pair.items():
    results[f"pair/{key}"] = value.numpy()
errors = []
too_long = np.zeros((1, int(inputs["too_long"])), np.int32)
for name, call in (
    (
        "too_long",
        lambda: loaded.signatures["serving_default"](
            input_word_ids=tf.constant(too_long),
            input_mask=tf.constant(too_long),
            input_type_ids=tf.constant(too_long),
        ),
    ),
    (
        "wrong_dtype",
        lambda: loaded.signatures["serving_default"](
            input_word_ids=tf.constant(inputs["input_word_ids"].astype(np.int64)),
            input_mask=tf.constant(inputs["input_mask"]),
            input_type_ids=tf.constant(inputs["input_type_ids"]),
        ),
    ),
    (
        "missing_input",
        lambda: loaded.signatures["serving_default"](
            input_word_ids=tf.constant(inputs["input_word_ids"]),
            input_mask=tf.constant(inputs["input_mask"]),
        ),
    ),
    (
        "bad_type",
        lambda: loaded.signatures["serving_default"](
            input_word_ids=tf.constant(inputs["input_word_ids"]),
            input_mask=tf.constant(inputs["input_mask"]),
            input_type_ids=tf.constant(inputs["input_type_ids"] * 0 - 1),
        ),
    ),
    (
        "empty",
        lambda: loaded.signatures["serving_default"](
            input_word_ids=tf.zeros([2, 0], tf.int32),
            input_mask=tf.zeros([2, 0], tf.int32),
            input_type_ids=tf.zeros([2, 0], tf.int32),
        ),
    ),
    (
        "pair_sizes",
        lambda: loaded.signatures["serve_text_pair"](
            text_a=tf.constant(["one", "two"]), text_b=tf.constant(["only one"])
        ),
    ),
    (
        "bad_id",
        lambda: loaded.signatures["serving_default"](
            input_word_ids=tf.constant(inputs["input_word_ids"] * 0 + 10**6),
            input_mask=tf.constant(inputs["input_mask"]),
            input_type_ids=tf.constant(inputs["input_type_ids"]),
        ),
    ),
):
    try:
        call()
        errors.append(f"{name}: no error")
    except Exception as error:  # noqa: BLE001 - the message is what is checked
        errors.append(f"{name}: {type(error).__name__}: {str(error)[:3000]}")
results["errors"] = np.array(errors)
np.savez(outputs_path, **results)
