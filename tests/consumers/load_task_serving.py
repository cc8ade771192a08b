"""A consumer of a fine-tuned model's SavedModel in a fresh process that never imports electra_tf.

Usage: python load_task_serving.py VERSION_DIR INPUTS.npz OUTPUTS.npz [VERSION_DIR INPUTS.npz
OUTPUTS.npz ...]  (or through run_consumers.py, which can probe the ops core TensorFlow
lacks first)

One process serves every triple in turn (one TensorFlow import for several exports).
INPUTS holds `texts` (and `text_pairs` for pair models), id arrays `input_word_ids`,
`input_mask`, `input_type_ids`, and `examples` (serialized tf.Examples, base64). OUTPUTS gets
every output of serving_default (`text/...`), serve (`ids/...`) and serve_examples
(`examples/...`), and `error/bad_mask`: the message of a call with mask value 2.
Imported (test_task_export.py's in-process cases), its `consume` serves in the importing process.
"""

import base64
import gc
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401 - the text signature's ops


def plain(value):
    """A tensor as a NumPy array an .npz holds (strings decoded to str)."""
    array = value.numpy()
    if array.dtype == object:
        return np.vectorize(lambda b: b.decode(), otypes=[str])(array)
    return array


def consume(folder, inputs_path, outputs_path):
    """Every signature of the SavedModel `folder` on INPUTS, written to OUTPUTS."""
    inputs = np.load(inputs_path)
    loaded = tf.saved_model.load(folder)
    assert __name__ != "__main__" or "electra_tf" not in sys.modules  # run as a consumer
    results = {}
    text = {"text": tf.constant([str(t) for t in inputs["texts"]])}
    if "text_pairs" in inputs:
        text["text_pair"] = tf.constant([str(t) for t in inputs["text_pairs"]])
    for key, value in loaded.signatures["serving_default"](**text).items():
        results[f"text/{key}"] = plain(value)
    names = ("input_word_ids", "input_mask", "input_type_ids")
    ids = {name: tf.constant(inputs[name]) for name in names}
    for key, value in loaded.signatures["serve"](**ids).items():
        results[f"ids/{key}"] = plain(value)
    serialized = [base64.b64decode(str(row)) for row in inputs["examples"]]
    examples = loaded.signatures["serve_examples"](examples=tf.constant(serialized))
    for key, value in examples.items():
        results[f"examples/{key}"] = plain(value)
    bad = dict(ids, input_mask=ids["input_mask"] * 2)
    try:
        loaded.signatures["serve"](**bad)
        results["error/bad_mask"] = np.array("no error")
    except tf.errors.InvalidArgumentError as error:
        results["error/bad_mask"] = np.array(error.message)
    np.savez(outputs_path, **results)


if __name__ == "__main__":  # imported, `consume` serves in the importing process
    assert "electra_tf" not in sys.modules
    arguments = sys.argv[1:]
    assert arguments and len(arguments) % 3 == 0, __doc__
    for start in range(0, len(arguments), 3):
        consume(*arguments[start : start + 3])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
