"""A consumer of fine-tuned SavedModels, plain and `--xla`, in a fresh process that never
imports electra_tf, with XLA's CPU JIT as a server would set it.

Usage: python load_task_serving_xla.py MODE INPUTS.npz OUTPUTS.npz VERSION_DIR...

MODE: `default` (Python's TensorFlow as it starts), `set_jit_off`
(`tf.config.optimizer.set_jit(False)` first) or `serving_off` (`tensorflow::
DisableXlaCompilation()` first, what TF Serving's model server calls unless started with
`--xla_cpu_compilation_enabled=true`). INPUTS holds `texts` and int32 `input_word_ids`,
`input_mask`, `input_type_ids`. OUTPUTS gets, per folder `i`, every output of
serving_default (`i/text/...`) and serve (`i/ids/...`), or the error's message
(`i/error`), and `i/bad_mask`: the message of a `serve` call with mask value 2.
"""

import ctypes
import gc
import os
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


def answers(folders, inputs):
    """{`i/text/...`, `i/ids/...` or `i/error`, `i/bad_mask`: value} for each folder `i`
    (the OUTPUTS above); `inputs` holds the INPUTS' arrays."""
    ids = {n: tf.constant(inputs[n]) for n in ("input_word_ids", "input_mask", "input_type_ids")}
    results = {}
    for i, folder in enumerate(folders):
        loaded = tf.saved_model.load(str(folder))
        try:
            texts = tf.constant([str(t) for t in inputs["texts"]])
            for key, value in loaded.signatures["serving_default"](text=texts).items():
                results[f"{i}/text/{key}"] = plain(value)
            for key, value in loaded.signatures["serve"](**ids).items():
                results[f"{i}/ids/{key}"] = plain(value)
        except tf.errors.OpError as error:
            results[f"{i}/error"] = np.array(error.message)
        try:
            loaded.signatures["serve"](**dict(ids, input_mask=ids["input_mask"] * 2))
            results[f"{i}/bad_mask"] = np.array("no error")
        except tf.errors.InvalidArgumentError as error:
            results[f"{i}/bad_mask"] = np.array(error.message)
    return results


def main(mode, inputs_path, outputs_path, *folders):
    if mode == "set_jit_off":
        tf.config.optimizer.set_jit(False)
    elif mode == "serving_off":  # tensorflow_serving/model_servers/main.cc does this
        library = ctypes.CDLL(os.path.join(os.path.dirname(tf.__file__), "libtensorflow_cc.so.2"))
        library._ZN10tensorflow21DisableXlaCompilationEv()
    results = answers(folders, np.load(inputs_path))
    assert "electra_tf" not in sys.modules
    np.savez(outputs_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
