"""Host overhead of our JAX step: `train_on_batch` (the device bench's way) against `fit`'s loop,
on the small recipe's graph (12 layers, the same variables) with negligible arithmetic."""

import json, sys, time
import numpy as np
import keras
from electra_tf.bench.step import StepOptions, step_config, workload
from electra_tf.pretraining.pretrainer import ElectraPretrainer

TINY = (
    "model.vocabulary_size=1200",
    "model.hidden_dim=16",
    "model.embedding_dim=8",
    "model.num_heads=2",
    "model.intermediate_dim=32",
    "model.max_sequence_length=16",
)
mode, steps = sys.argv[1], 60
opts = StepOptions(recipe="small", batch=2, seq=16, overrides=TINY)
config = step_config(opts)
ids = workload(config, 2, 16)
batches = [
    {"token_ids": i, "padding_mask": np.ones_like(i), "segment_ids": np.zeros_like(i)} for i in ids
]
model = ElectraPretrainer(config)
model.compile()
print("variables", len(model.trainable_variables), len(model.optimizer.variables), file=sys.stderr)
if mode == "train_on_batch":
    for k in range(10):
        model.train_on_batch(batches[k % len(batches)], return_dict=True)
    times = []
    for k in range(steps):
        t = time.perf_counter()
        float(model.train_on_batch(batches[k % len(batches)], return_dict=True)["loss"])
        times.append(time.perf_counter() - t)
else:
    rows = {
        k: np.concatenate([b[k] for b in batches] * (80 // len(batches) + 1))[: 2 * 80]
        for k in batches[0]
    }
    stamps = []
    cb = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda b, logs: stamps.append(time.perf_counter())
    )
    model.fit(rows, batch_size=2, epochs=1, shuffle=False, verbose=0, callbacks=[cb])
    times = list(np.diff(stamps[-steps - 1 :]))
print(
    json.dumps(
        {
            "mode": mode,
            "backend": keras.config.backend(),
            "step_ms_median": 1000 * float(np.median(times)),
            "step_ms_min": 1000 * float(min(times)),
            "n": len(times),
        }
    )
)
