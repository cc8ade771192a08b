import time, sys, numpy as np, tensorflow as tf
from electra_tf.bench.step import StepOptions, build_step
from electra_tf.layers import kernels
from electra_tf.ops.random import fmix32
opts = StepOptions(recipe="small", batch=32, seq=128)
# python abdrop.py xla|plain|store PAIRS
JIT = sys.argv[1] == "xla" if len(sys.argv) > 1 else True
STORE = len(sys.argv) > 1 and sys.argv[1] == "store"
_cache = {}
def _mask_apply(x, key, rate):
    n = tf.size(x)
    idx = tf.cast(tf.range((n + 1) // 2), tf.uint32)
    words = fmix32(tf.bitwise.bitwise_xor(idx * tf.constant(0x9E3779B9, tf.uint32), key))
    halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:n]
    keep = tf.reshape(halves >= tf.constant(round(rate * 65536), tf.uint16), tf.shape(x))
    return tf.where(keep, x * tf.cast(1 / (1 - rate), x.dtype), tf.zeros([], x.dtype))
def applier(rate):
    if rate not in _cache:
        _cache[rate] = tf.function(lambda x, key: _mask_apply(x, key, rate), jit_compile=JIT, autograph=False)
    return _cache[rate]
def hash_dropout(inputs, rate, seed):
    app = applier(float(rate))
    s = tf.bitcast(tf.cast(seed, tf.int32), tf.uint32)
    key = fmix32(tf.bitwise.bitwise_xor(fmix32(s[0] + tf.constant(0x5BD1E995, tf.uint32)), s[1]))
    x = tf.convert_to_tensor(inputs)
    if STORE:  # plain graph, the mask kept for the backward pass
        return _mask_apply(x, key, float(rate))
    @tf.custom_gradient
    def d(x):
        def grad(dy): return app(dy, key)
        return app(x, key), grad
    return d(x)
steps = {}
_, _, s = build_step(opts); s(); steps["cur"] = s
orig = kernels.dropout; kernels.dropout = hash_dropout
_, _, s = build_step(opts); s(); steps["hash"] = s
kernels.dropout = orig
for _ in range(2):
    for s in steps.values(): s()
t = {k: [] for k in steps}
for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 12):
    order = list(steps.items()) if i % 2 == 0 else list(steps.items())[::-1]
    for k, s in order:
        t0 = time.perf_counter(); s(); t[k].append(time.perf_counter() - t0)
r = np.array(t["cur"]) / np.array(t["hash"])
print(f"jit={JIT} cur {np.median(t['cur']):.3f}s hash {np.median(t['hash']):.3f}s paired median {np.median(r):.3f} [{r.min():.2f}-{r.max():.2f}]")
