"""Run by test_backends.py under one KERAS_BACKEND: a tiny pretrainer's outputs on one batch.

`python backend_child.py WEIGHTS OUT [--portable]` builds the same tiny pretrainer, loads
WEIGHTS (the TensorFlow run writes them, whole, if the file does not exist; the others,
started at the same time, wait for them), and saves to OUT (npz): the
masking, sampling and corruption of one batch, the discriminator's logits, the losses, the
gradient of every trainable variable (by path), then the per-step losses of three
`fit` steps without dropout and the weights after them.
"""

from __future__ import annotations

import gc
import os
import sys

import keras
import numpy as np
from backend_runs import save_whole, wait_for

from electra_tf.config import load_recipe
from electra_tf.ops import backend
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def tiny_config(sampler="inverse_cdf"):
    return load_recipe("tiny").override(
        "model.vocabulary_size=131",
        "model.num_layers=1",
        "model.hidden_dim=16",
        "model.embedding_dim=8",
        "model.num_heads=2",
        "model.intermediate_dim=32",
        "model.max_sequence_length=16",
        "model.dropout=0.0",
        "data.sequence_length=16",
        "train.batch_size=4",
        "train.num_steps=10",
        "train.warmup_steps=2",
        "train.learning_rate=1e-2",
        f"objective.sampler={sampler}",
    )


def batches():
    """Two batches of 4 with real lengths 16, 12, 9 and 5 (padding after)."""
    rng = np.random.default_rng(7)
    ids = rng.integers(104, 131, size=(8, 16)).astype("int32")
    lengths = np.array([16, 12, 9, 5, 16, 14, 7, 11])
    mask = (np.arange(16)[None, :] < lengths[:, None]).astype("int32")
    ids[:, 0] = 101
    ids[np.arange(8), lengths - 1] = 102
    ids = ids * mask
    return {"token_ids": ids, "padding_mask": mask, "segment_ids": np.zeros_like(ids)}


def main(weights: str, out: str, sampler: str) -> None:
    keras.utils.set_random_seed(1234)  # fixed weights (written here on TF): see objectives_child
    pretrainer = ElectraPretrainer(tiny_config(sampler))
    pretrainer.compile()
    if backend.name() == "tensorflow" and not os.path.exists(weights):
        save_whole(pretrainer, weights)  # the other backends, started with it, wait for it
    else:
        wait_for(weights)
        pretrainer.load_weights(weights)
    data = batches()
    first = {k: v[:4] for k, v in data.items()}
    loss, output, grads = pretrainer.loss_and_gradients(first, training=False)
    results = {"loss": loss}
    for group in ("mlm", "discriminator"):
        for key, value in getattr(output, group).items():
            results[f"{group}/{key}"] = value
    for variable, gradient in zip(pretrainer.trainable_variables, grads, strict=True):
        results[f"grad/{variable.path}"] = gradient
    history = pretrainer.fit(data, batch_size=4, epochs=1, steps_per_epoch=2, verbose=0)
    results["fit/step_loss"] = np.array(history.history["step_loss"])
    history = pretrainer.fit(data, batch_size=4, epochs=1, steps_per_epoch=1, verbose=0)
    results["fit/step_loss_3"] = np.array(history.history["step_loss"])
    for variable in pretrainer.trainable_variables:
        results[f"weight/{variable.path}"] = variable
    if backend.name() == "jax" and len(__import__("jax").devices()) > 1:
        results.update(data_parallel(weights, sampler, data))
    results = {k: np.asarray(keras.ops.convert_to_numpy(v)) for k, v in results.items()}
    results["backend"] = np.array(backend.name())
    if backend.name() != "tensorflow":
        results["refusal"] = np.array(refusal(sampler))
        results["cli_refusal"] = np.array(cli_refusal(os.path.dirname(out)))
    np.savez(out, **results)


def data_parallel(weights, sampler, data):
    """The same three steps with the batch split over every JAX device (DataParallel)."""
    devices = keras.distribution.list_devices()
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
    try:
        pretrainer = ElectraPretrainer(tiny_config(sampler))
        pretrainer.compile()
        pretrainer.load_weights(weights)
        first = pretrainer.fit(data, batch_size=4, epochs=1, steps_per_epoch=2, verbose=0)
        third = pretrainer.fit(data, batch_size=4, epochs=1, steps_per_epoch=1, verbose=0)
        results = {
            "dp/devices": np.array(len(devices)),
            "dp/step_loss": np.array(first.history["step_loss"]),
            "dp/step_loss_3": np.array(third.history["step_loss"]),
        }
        for variable in pretrainer.trainable_variables:
            results[f"dp/weight/{variable.path}"] = variable
        return results
    finally:
        keras.distribution.set_distribution(None)


def refusal(sampler) -> str:
    """The sentence a TensorFlow-only objective gets on this backend (every objective is
    portable now, so `bert_mlm` is marked TensorFlow-only for the check)."""
    from electra_tf.pretraining.objectives import OBJECTIVES

    OBJECTIVES["bert_mlm"].portable = False
    try:
        ElectraPretrainer(tiny_config(sampler).override("objective.name=bert_mlm"))
    except Exception as error:  # noqa: BLE001 - the message is what the test reads
        return f"{type(error).__name__}: {error}"
    finally:
        OBJECTIVES["bert_mlm"].portable = True
    return ""


def cli_refusal(folder) -> str:
    """What `electra-tf pretrain` says on this backend: its exit code and standard error."""
    import contextlib
    import io

    from electra_tf.cli import main as cli_main

    text = os.path.join(folder, "text.txt")
    with open(text, "w") as handle:
        handle.write("a line of text\n")
    error = io.StringIO()
    with contextlib.redirect_stderr(error):
        code = cli_main(["pretrain", "--text", text, "--output-dir", os.path.join(folder, "r")])
    return f"{code} {error.getvalue().strip()}"


if __name__ == "__main__":
    if "--portable" in sys.argv:
        with backend.portable():
            main(sys.argv[1], sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2], sys.argv[3])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
