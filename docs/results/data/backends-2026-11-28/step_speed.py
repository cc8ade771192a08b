"""Seconds per pre-training step on this backend (KERAS_BACKEND), one JSON line.

`python step_speed.py [steps]`: the tiny recipe (4 layers, hidden 128, generator 1/2),
vocabulary 30,522, batch 32 x 128, the same numpy batches on every backend, `fit` with
its default step (TensorFlow: traced, not XLA; JAX: the whole step jitted; PyTorch:
eager). The first 3 steps (tracing, compiling) are reported apart; the median of the
rest is the figure. run.sh interleaves the backends in rounds.
"""

import json
import sys
import time

import keras
import numpy as np

from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 23
config = load_recipe("tiny").override(
    "model.vocabulary_size=30522", "data.sequence_length=128", "train.batch_size=32"
)
rng = np.random.default_rng(0)
ids = rng.integers(1000, 30522, size=(32 * steps, 128)).astype("int32")
ids[:, 0], ids[:, -1] = 101, 102
data = {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}


class Clock(keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        self.start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        times.append(time.perf_counter() - self.start)


times = []
started = time.perf_counter()
pretrainer = ElectraPretrainer(config)
pretrainer.compile()
built = time.perf_counter() - started
pretrainer.fit(data, batch_size=32, epochs=1, verbose=0, callbacks=[Clock()])
print(json.dumps({
    "backend": keras.config.backend(),
    "build_s": round(built, 2),
    "first_3_steps_s": [round(t, 3) for t in times[:3]],
    "median_step_s": round(float(np.median(times[3:])), 4),
    "steps_timed": len(times) - 3,
    "tokens_per_s": round(32 * 128 / float(np.median(times[3:])), 1),
}))
