"""Probe: the served encoder's forward (inference.encoder_sequence, first_only) in float32 vs
every weight and activation cast to bfloat16, random ids, [32, 52] and [1, 27]; medians."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
from electra_tf.tasks.model_folder import load_finetuned
from electra_tf.serving import inference
model, _ = load_finetuned(os.environ.get("RUN", "/tmp/serve/run") + "/model")
enc = model.encoder
class Cast:
    def __init__(s, o): s._o = o
    def __getattr__(s, n):
        v = getattr(s._o, n)
        if hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, (int, float)):
            return tf.cast(v, tf.bfloat16) if tf.as_dtype(v.dtype) == tf.float32 else v
        if v is None or isinstance(v, (int, float, str, bool)): return v
        if isinstance(v, (list, tuple)): return [Cast(x) for x in v]
        return Cast(v)
res = {}
for b, l in ((32, 52), (1, 27)):
    ids = tf.constant(np.random.default_rng(0).integers(1000, 20000, (b, l)), tf.int32)
    mask = tf.ones_like(ids); seg = tf.zeros_like(ids)
    for name, e in (("float32", enc), ("bfloat16", Cast(enc))):
        f = tf.function(lambda: tf.cast(inference.encoder_sequence(e, ids, mask, seg, first_only=True), tf.float32))
        out = f()
        for _ in range(5): f()
        ts = []
        for _ in range(30 if b > 1 else 200):
            t = time.perf_counter(); f().numpy(); ts.append(time.perf_counter() - t)
        res[f"{name} [{b},{l}]"] = round(1000 * float(np.median(ts)), 3)
        res.setdefault("outs", {})[f"{name} {b}"] = out.numpy()[:1, :4].tolist()
print(json.dumps(res))
