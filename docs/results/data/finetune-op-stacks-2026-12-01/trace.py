"""Seconds of a MiniLM-shaped classifier's first `fit` call (trace + 1 step, batch 32 x 128)
with TensorFlow's per-op creation stack recorded (as today) or one fixed stack."""
import json, resource, sys, time
mode = sys.argv[1]
import numpy as np
import keras
import tensorflow as tf
if mode == "fixed":
    from tensorflow.python.framework import ops
    from tensorflow.python.util import tf_stack
    fixed = tf_stack.extract_stack(stacklevel=1)
    class _Fixed:
        def __getattr__(self, name): return getattr(tf_stack, name)
        @staticmethod
        def extract_stack(stacklevel=1): return fixed
    ops.tf_stack = _Fixed()
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.classifier import ElectraClassifier
from electra_tf.tasks.optimizer import LayerwiseAdamW, layerwise_multipliers
keras.utils.set_random_seed(0)
enc = ElectraEncoder(vocabulary_size=30522, num_layers=6, hidden_dim=384, embedding_dim=384,
                     num_heads=12, intermediate_dim=1536)
model = ElectraClassifier(enc, num_outputs=2)
rng = np.random.default_rng(0)
x = {"token_ids": rng.integers(1000, 30000, (32, 128)).astype("int32"),
     "padding_mask": np.ones((32, 128), "int32"), "segment_ids": np.zeros((32, 128), "int32")}
y = rng.integers(0, 2, (32,))
model.compile(optimizer=keras.optimizers.AdamW(1e-4),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model(x)
c0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.time()
model.fit(x, y, batch_size=32, epochs=1, verbose=0)
t1 = time.time(); c1 = resource.getrusage(resource.RUSAGE_SELF)
t2 = time.time(); model.fit(x, y, batch_size=32, epochs=1, verbose=0); t3 = time.time()
print(json.dumps({"mode": mode, "first_fit_s": round(t1 - t0, 2),
                  "first_fit_cpu_s": round(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime, 2),
                  "second_fit_s": round(t3 - t2, 2)}))
