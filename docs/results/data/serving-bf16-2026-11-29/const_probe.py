"""Probe: the served encoder ([1, 27] and [32, 52], first position) with its weights read from
variables (as exported) against the same weights as graph constants (what a frozen graph
would hold): `python const_probe.py`; INTRA / INTER set the threads (2 / 1)."""
"""Probe: served encoder forward with variable weights vs weights as graph constants."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(int(os.environ.get("INTRA","2")))
tf.config.threading.set_inter_op_parallelism_threads(int(os.environ.get("INTER","1")))
import keras
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.serving import inference
keras.utils.set_random_seed(1)
enc = ElectraEncoder(vocabulary_size=3010, num_layers=6, hidden_dim=384, embedding_dim=384,
                     num_heads=12, intermediate_dim=1536, max_sequence_length=128)
enc({"token_ids": tf.zeros([1, 8], tf.int32), "padding_mask": tf.ones([1, 8], tf.int32), "segment_ids": tf.zeros([1, 8], tf.int32)})
class Const:
    def __init__(s, o): s._o = o
    def __getattr__(s, n):
        v = getattr(s._o, n)
        if isinstance(v, (tf.Variable, keras.Variable)) or (hasattr(v, "numpy") and hasattr(v, "dtype") and hasattr(v, "shape")):
            with tf.init_scope():
                a = np.array(v)
            return tf.constant(a)
        if v is None or isinstance(v, (int, float, str, bool)): return v
        if isinstance(v, (list, tuple)): return [Const(x) for x in v]
        if callable(v) and not hasattr(v, "__dict__"): return v
        return Const(v)
res = {}
which = sys.argv[1:] or ["var", "const"]
for b, l in ((1, 27), (32, 52)):
    ids = tf.constant(np.random.default_rng(0).integers(10, 3000, (b, l)), tf.int32)
    mask = tf.ones_like(ids); seg = tf.zeros_like(ids)
    for name in which:
        e = enc if name == "var" else Const(enc)
        f = tf.function(lambda i, m, s: inference.encoder_sequence(e, i, m, s, first_only=True))
        out = f(ids, mask, seg)
        for _ in range(5): f(ids, mask, seg)
        ts = []
        for _ in range(30 if b > 1 else 200):
            t = time.perf_counter(); f(ids, mask, seg).numpy(); ts.append(time.perf_counter() - t)
        res[f"{name} [{b},{l}]"] = round(1000 * float(np.median(ts)), 3)
        res.setdefault("outs", {})[f"{name} {b}"] = np.asarray(out)[:1, :3].tolist()
print(json.dumps(res))
