"""Run by test_backends.py's JAX and PyTorch children (`backends_child.py --mixed-float16
OUT`, after their own work) under their KERAS_BACKEND: mixed_float16 against float32.

`python mixed_float16_child.py OUT` (the same alone) builds the tiny pretrainer of
backend_child.py twice, in float32 and in mixed_float16 with the same weights, and trains
the float32 one two `fit` steps. The mixed one trains two steps at Keras's initial loss
scale (they overflow and are skipped), two at a scale of 512 (they apply), then one at 1e30
(overflow again).
Saves to OUT (npz): the step losses, the weights after each stage, the mixed run's weight
dtypes, its loss scale and step counter after each stage, and the `nonfinite` logs.
"""

from __future__ import annotations

import gc
import sys

import keras
import numpy as np
from backend_child import batches, tiny_config

from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _weights(model):
    return np.concatenate(
        [np.ravel(keras.ops.convert_to_numpy(v.value)) for v in model.trainable_variables]
    )


def _fit(model, data, steps):
    history = model.fit(data, batch_size=4, epochs=steps, steps_per_epoch=1, verbose=0)
    return history.history


def main(out: str) -> None:
    keras.utils.set_random_seed(1234)
    # Dropout 1e-9 drops nothing but keeps Keras's attention on its einsum path: with no
    # dropout it takes `dot_product_attention`, whose float16 form (float32 accumulation)
    # JAX's CPU compiler refuses ("F16_F16_F32 is not supported by dot_general on CPU").
    overrides = ("train.learning_rate=1e-3", "train.warmup_steps=0", "model.dropout=1e-9")
    full = ElectraPretrainer(tiny_config().override(*overrides))
    full.compile()
    mixed_config = tiny_config().override(*overrides, "train.mixed_precision=mixed_float16")
    mixed = ElectraPretrainer(mixed_config)
    mixed.compile()
    for ours, theirs in zip(mixed.trainable_variables, full.trainable_variables, strict=True):
        ours.assign(np.array(keras.ops.convert_to_numpy(theirs.value)))  # a copy (JAX donates)
    data, results = batches(), {"initial": _weights(full)}
    results["full_loss"] = np.array(_fit(full, data, 2)["step_loss"])
    results["full_after"] = _weights(full)
    optimizer = mixed.optimizer
    # Keras's initial scale, 2**15, overflows this model's float16 gradients: the scale
    # calibrates down, skipping those steps.
    logs = _fit(mixed, data, 2)
    results["calibration_nonfinite"] = np.array(logs["nonfinite"])
    results["scale_after_calibration"] = float(optimizer.dynamic_scale.numpy())
    results["steps_after_calibration"] = int(optimizer.iterations.numpy())
    results["after_calibration"] = _weights(mixed)
    optimizer.dynamic_scale.assign(512.0)  # no overflow: both steps apply
    results["mixed_loss"] = np.array(_fit(mixed, data, 2)["step_loss"])
    results["mixed_after"] = _weights(mixed)
    results["mixed_dtypes"] = np.array(sorted({v.dtype for v in mixed.trainable_variables}))
    results["scale_after_two"] = float(optimizer.dynamic_scale.numpy())
    results["steps_before_overflow"] = int(optimizer.iterations.numpy())
    optimizer.dynamic_scale.assign(1e30)
    logs = _fit(mixed, data, 1)
    results["overflow_loss"] = np.array(logs["step_loss"])
    results["overflow_nonfinite"] = np.array(logs["nonfinite"])
    results["scale_after_overflow"] = float(optimizer.dynamic_scale.numpy())
    results["steps_after_overflow"] = int(optimizer.iterations.numpy())
    results["after_overflow"] = _weights(mixed)
    results["backend"] = keras.config.backend()
    np.savez(out, **results)


if __name__ == "__main__":
    main(sys.argv[1])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
