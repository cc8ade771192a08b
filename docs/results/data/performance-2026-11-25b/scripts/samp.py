import time, numpy as np, tensorflow as tf
from electra_tf.ops import random as er, sampling
R, V = 640, 30522
logits = tf.constant(np.random.default_rng(0).standard_normal((R, V)).astype(np.float32))
rows = tf.range(R)
@tf.function
def hash_uniform(step):
    keys = er.row_keys(1234, step, 3, rows); return tf.reduce_sum(er.uniform(keys, V))
@tf.function
def full(step, logits):
    keys = er.row_keys(1234, step, 3, rows)
    return sampling.gumbel_max_sample(logits, er.uniform(keys, V))
@tf.function
def philox_full(step, logits):
    key = er.row_keys(1234, step, 3, tf.constant([0]))
    u = tf.random.stateless_uniform([R, V], seed=tf.bitcast(tf.stack([key[0], key[0] ^ 7]), tf.int32), minval=2**-24, maxval=1.0)
    return sampling.gumbel_max_sample(logits, u)
@tf.function
def gumbel_only(logits, u):
    return sampling.gumbel_max_sample(logits, u)
@tf.function
def argmax_only(logits):
    return tf.argmax(logits, -1, output_type=tf.int32)
u0 = tf.random.uniform([R, V], 0.01, 0.99)
fs = dict(hash_uniform=lambda s: hash_uniform(s), full=lambda s: full(s, logits), philox_full=lambda s: philox_full(s, logits), gumbel_only=lambda s: gumbel_only(logits, u0), argmax_only=lambda s: argmax_only(logits))
step = tf.constant(5, tf.int64)
for f in fs.values(): f(step); f(step)
ts = {n: [] for n in fs}
for i in range(15):
    for n, f in fs.items():
        t0 = time.perf_counter(); x = f(step); _ = x.numpy(); ts[n].append(time.perf_counter() - t0)
for n in fs: print(f"{n:14s} {np.median(ts[n])*1e3:7.1f} ms")
xfull = tf.function(lambda step, logits: full.python_function(step, logits), jit_compile=True)
def xl(step, logits):
    keys = er.row_keys(1234, step, 3, rows)
    return xsamp(keys, logits)
@tf.function(jit_compile=True)
def xsamp(keys, logits):
    return sampling.gumbel_max_sample(logits, er.uniform(keys, V))
@tf.function
def outer(step, logits): return xl(step, logits)
a = full(step, logits); b = outer(step, logits)
print("same samples", bool(tf.reduce_all(a == b)))
ts = {"full": [], "xla_island": []}
for i in range(15):
    for n, f in (("full", full), ("xla_island", outer)):
        t0 = time.perf_counter(); f(step, logits).numpy(); ts[n].append(time.perf_counter() - t0)
for n in ts: print(f"{n:14s} {np.median(ts[n])*1e3:7.1f} ms")
