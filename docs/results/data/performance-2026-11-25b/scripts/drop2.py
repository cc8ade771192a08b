import time, numpy as np, tensorflow as tf
from electra_tf.layers.kernels import dropout
from electra_tf.ops.random import fmix32
RATE=0.1; THR=round(RATE*65536)
def _apply_hash(x, key):
    n = tf.size(x)
    idx = tf.cast(tf.range((n + 1) // 2), tf.uint32)
    words = fmix32(tf.bitwise.bitwise_xor(idx * tf.constant(0x9E3779B9, tf.uint32), key))
    halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:n]
    keep = tf.reshape(halves >= tf.constant(THR, tf.uint16), tf.shape(x))
    return tf.where(keep, x * (1/(1-RATE)), tf.zeros([], x.dtype))
xla_apply = tf.function(_apply_hash, jit_compile=True)
plain_apply = tf.function(_apply_hash)
def mkd(app):
    @tf.custom_gradient
    def d(x, key):
        y = app(x, key)
        def grad(dy): return app(dy, key), None
        return y, grad
    return d
shapes = [(32,4,128,128),(32,128,256)]
fs = {}
for shp in shapes:
    x0 = tf.constant(np.random.default_rng(0).standard_normal(shp).astype(np.float32))
    seed = tf.constant([3, 4], tf.int32); key = tf.constant(12345, tf.uint32)
    def mk(fn, arg, x0=x0):
        @tf.function
        def f():
            with tf.GradientTape() as tape:
                tape.watch(x0); y = fn(x0, arg); loss = tf.reduce_sum(y * y)
            return y, tape.gradient(loss, x0)
        return f
    fs[f"cur{shp}"] = mk(lambda x, s: dropout(x, RATE, s), seed)
    fs[f"xlahash{shp}"] = mk(mkd(xla_apply), key)
    fs[f"plainhash{shp}"] = mk(mkd(plain_apply), key)
    y, g = fs[f"xlahash{shp}"](); print(shp, "kept frac", float(tf.reduce_mean(tf.cast(y != 0, tf.float32))))
for f in fs.values(): f(); f()
ts = {n: [] for n in fs}
for i in range(30):
    for n, f in fs.items():
        t0 = time.perf_counter(); y, g = f(); g.numpy(); ts[n].append(time.perf_counter() - t0)
for n in fs: print(f"{n:30s} {np.median(ts[n])*1e3:7.2f} ms")
