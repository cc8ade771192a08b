"""Probe: float32 vs bfloat16 (LayerNorm statistics in float32) served encoder, by rows."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2); tf.config.threading.set_inter_op_parallelism_threads(1)
from electra_tf.tasks.model_folder import load_finetuned
from electra_tf.serving import inference
model, _ = load_finetuned("/tmp/serve/run/model")
enc = model.encoder
qkv = [[tf.Variable(k), tf.Variable(b)] for k, b in inference.fused_qkv(enc)]
res = {}
for b, l in ((1, 32), (2, 32), (4, 32), (8, 32), (16, 32)):
    ids = tf.constant(np.random.default_rng(0).integers(1000, 20000, (b, l)), tf.int32)
    mask = tf.ones_like(ids); seg = tf.zeros_like(ids)
    for name, dt in (("f32", tf.float32), ("bf16", tf.bfloat16)):
        f = tf.function(lambda i, m, s: inference.encoder_sequence(enc, i, m, s, qkv, packed=True, first_only=True, dtype=dt))
        for _ in range(5): f(ids, mask, seg)
        ts = []
        for _ in range(max(20, 200 // b)):
            t = time.perf_counter(); f(ids, mask, seg).numpy(); ts.append(time.perf_counter() - t)
        res[f"{name} {b*l}"] = round(1000 * float(np.median(ts)), 2)
    res[f"ratio {b*l}"] = round(res[f"f32 {b*l}"] / res[f"bf16 {b*l}"], 2)
print(json.dumps(res))
