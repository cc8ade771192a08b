"""Probe: the fine-tuned classifier's served encoder (packed, first position) in float32, in
bfloat16 with LayerNorm statistics in float32 (LN32), and all in bfloat16 (LN16)."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2); tf.config.threading.set_inter_op_parallelism_threads(1)
from electra_tf.tasks.model_folder import load_finetuned
from electra_tf.serving import inference
model, _ = load_finetuned("/tmp/serve/run/model")
enc = model.encoder
qkv = [[tf.Variable(k), tf.Variable(b)] for k, b in inference.fused_qkv(enc)]
ln32 = inference._layer_norm
def ln16(x, layer):
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    scale = tf.math.rsqrt(variance + tf.cast(layer.epsilon, x.dtype)) * tf.cast(layer.gamma, x.dtype)
    return x * scale + (tf.cast(layer.beta, x.dtype) - mean * scale)
res = {}
for b, l in ((1, 27), (32, 52)):
    ids = tf.constant(np.random.default_rng(0).integers(1000, 20000, (b, l)), tf.int32)
    mask = tf.ones_like(ids); seg = tf.zeros_like(ids)
    ref = None
    for name, dt, ln in (("float32", tf.float32, ln32), ("bf16 LN32", tf.bfloat16, ln32), ("bf16 LN16", tf.bfloat16, ln16)):
        inference._layer_norm = ln
        f = tf.function(lambda i, m, s: inference.encoder_sequence(enc, i, m, s, qkv, packed=True, first_only=True, dtype=dt))
        out = f(ids, mask, seg).numpy()
        if ref is None: ref = out
        for _ in range(5): f(ids, mask, seg)
        ts = []
        for _ in range(30 if b > 1 else 200):
            t = time.perf_counter(); f(ids, mask, seg).numpy(); ts.append(time.perf_counter() - t)
        res[f"{name} [{b},{l}] ms"] = round(1000 * float(np.median(ts)), 2)
        res[f"{name} [{b},{l}] maxdiff"] = float(np.abs(out - ref).max())
print(json.dumps(res))
