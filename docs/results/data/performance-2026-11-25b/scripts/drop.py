import time, numpy as np, tensorflow as tf
from electra_tf.layers.kernels import dropout
RATE=0.1; THR=round(RATE*65536)
def _apply(x, seed):
    size = tf.size(x)
    words = tf.random.stateless_uniform([(size + 1) // 2], seed=seed, minval=None, maxval=None, dtype=tf.uint32)
    halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size]
    keep = tf.reshape(halves >= tf.constant(THR, tf.uint16), tf.shape(x))
    return tf.where(keep, x * (1/(1-RATE)), tf.zeros([], x.dtype))
xla_apply = tf.function(_apply, jit_compile=True)
@tf.custom_gradient
def xdrop(x, seed):
    y = xla_apply(x, seed)
    def grad(dy):
        return xla_apply(dy, seed), None
    return y, grad
shapes = [(32,4,128,128),(32,128,256)]
fs = {}
for shp in shapes:
    x0 = tf.constant(np.random.default_rng(0).standard_normal(shp).astype(np.float32))
    seed = tf.constant([3, 4], tf.int32)
    def mk(fn, x0=x0, seed=seed):
        @tf.function
        def f():
            outs = []
            with tf.GradientTape() as tape:
                tape.watch(x0)
                y = fn(x0, seed)
                loss = tf.reduce_sum(y * y)
            return y, tape.gradient(loss, x0)
        return f
    a, b = mk(lambda x, s: dropout(x, RATE, s)), mk(xdrop)
    ya, ga = a(); yb, gb = b()
    print(shp, "fwd equal", bool(tf.reduce_all(ya == yb)), "grad maxdiff", float(tf.reduce_max(tf.abs(ga-gb))))
    fs[f"cur{shp}"] = a; fs[f"xla{shp}"] = b
for f in fs.values(): f(); f()
ts = {n: [] for n in fs}
for i in range(30):
    for n, f in fs.items():
        t0 = time.perf_counter(); y, g = f(); g.numpy(); ts[n].append(time.perf_counter() - t0)
for n in fs: print(f"{n:30s} {np.median(ts[n])*1e3:7.2f} ms")
