"""Run by test_backends_objectives.py under one KERAS_BACKEND: every objective on one batch.

`python objectives_child.py FOLDER` builds, for each objective, the tiny pretrainer of
`backend_child.py` (with the objective's own settings), loads `FOLDER/NAME.weights.h5`
(the TensorFlow run writes it, whole, if it does not exist; the others, started at the
same time, wait for it), and saves to
`FOLDER/BACKEND.npz`, keyed `NAME/...`: the total loss, the `mlm`, `discriminator` and
`extra` reports and the gradient of every trainable variable (by path). `two_stage` runs
twice: in stage 1 (`two_stage`) and in stage 2 (`two_stage_2`, set directly, without the
weight copy of the switch). Two cases also train (`FIT`, a JAX compile each): `bert_mlm`
two steps (its generator and replaced-token head must not move), `two_stage` three, the
switch falling before the third; their step losses and weights after are saved.
"""

from __future__ import annotations

import gc
import os
import sys

import keras
import numpy as np
from backend_child import batches, tiny_config
from backend_runs import save_whole, wait_for

from electra_tf.ops import backend
from electra_tf.pretraining.pretrainer import ElectraPretrainer

#: objective -> (config overrides, stage); the counts file is written by the test.
CASES = {
    "bert_mlm": (["objective.mask_token_rate=0.8", "objective.random_token_rate=0.1"], 1),
    "replace_mlm": ([], 1),
    "unigram": (["objective.unigram_counts={folder}/unigram_counts.npy"], 1),
    "all_tokens_mlm": ([], 1),
    "adversarial": ([], 1),
    "two_stage": (["model.generator_size_fraction=1.0", "model.weight_tying=none"], 1),
    "two_stage_2": (["model.generator_size_fraction=1.0", "model.weight_tying=none"], 2),
}
#: cases that also train, and for how many steps (step 0's learning rate is 0: warmup).
FIT = {"bert_mlm": 2, "two_stage": 3}


def pretrainer_for(case: str, folder: str) -> ElectraPretrainer:
    """The tiny pretrainer of `case`, compiled, with the case's saved weights."""
    overrides, stage = CASES[case]
    name = case.removesuffix("_2")
    config = tiny_config().override(
        f"objective.name={name}",
        "objective.stage_one_steps=2",
        *(o.format(folder=folder) for o in overrides),
    )
    # Fixed initial weights (TensorFlow writes them, the others load them): with fresh random
    # ones, a generator sample can land on a cumulative-probability boundary that TensorFlow's
    # two-level sums and the portable ones round apart (seen once: one id in eight, 93 vs 94).
    keras.utils.set_random_seed(1234)
    pretrainer = ElectraPretrainer(config)
    pretrainer.compile()
    weights = os.path.join(folder, f"{case}.weights.h5")
    if backend.name() == "tensorflow" and not os.path.exists(weights):
        save_whole(pretrainer, weights)  # the other backends wait for it
    else:
        wait_for(weights)
        pretrainer.load_weights(weights)
    pretrainer.objective.stage = stage
    return pretrainer


def run_case(case: str, folder: str, data) -> dict:
    """One case's loss, reports and gradients on the first batch, then one `fit` step."""
    pretrainer = pretrainer_for(case, folder)
    first = {k: v[:4] for k, v in data.items()}
    loss, output, grads = pretrainer.loss_and_gradients(first, training=False)
    results = {"loss": loss}
    for group in ("mlm", "discriminator"):
        for key, value in (getattr(output, group) or {}).items():
            results[f"{group}/{key}"] = value
    for key, (value, _) in output.extra.items():
        results[f"extra/{key}"] = value
    for variable, gradient in zip(pretrainer.trainable_variables, grads, strict=True):
        results[f"grad/{variable.path}"] = gradient
    if case in FIT:
        for variable in pretrainer.trainable_variables:
            results[f"initial/{variable.path}"] = keras.ops.copy(variable.value)
        steps = FIT[case]
        rows = {k: np.concatenate([v, v])[: 4 * steps] for k, v in data.items()}
        history = pretrainer.fit(rows, batch_size=4, epochs=1, steps_per_epoch=steps, verbose=0)
        results["fit/step_loss"] = np.array(history.history["step_loss"])
        results["fit/stage"] = np.array(pretrainer.objective.stage)
        for variable in pretrainer.trainable_variables:
            results[f"weight/{variable.path}"] = variable
    return {f"{case}/{k}": np.asarray(keras.ops.convert_to_numpy(v)) for k, v in results.items()}


def main(folder: str, cases) -> None:
    data = batches()
    results = {"backend": np.array(backend.name())}
    for case in cases:
        results.update(run_case(case, folder, data))
    np.savez(os.path.join(folder, f"{backend.name()}.npz"), **results)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(CASES))
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
