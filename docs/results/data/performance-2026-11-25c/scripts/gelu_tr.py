import time, numpy as np, tensorflow as tf
from electra_tf.layers import kernels
x0 = tf.random.normal([4096, 1024]); up = tf.random.normal([4096, 1024])
C = -0.7071067811865476
@tf.function(jit_compile=True, autograph=False)
def fwd_x(x): return x * (0.5 * tf.math.erfc(x * C))
@tf.function(jit_compile=True, autograph=False)
def bwd_x(x, u):
    cdf = 0.5 * tf.math.erfc(x * C)
    return u * (cdf + x * (0.3989422804014327 * tf.exp(x * x * -0.5)))
@tf.custom_gradient
def gelu_x(x):
    def grad(u): return bwd_x(x, u)
    return fwd_x(x), grad
@tf.custom_gradient
def gelu_lean(x):
    h = x * C
    cdf = 0.5 * tf.math.erfc(h)
    def grad(u):
        e = tf.exp(-(h * h))
        return u * (cdf + (0.3989422804014327 * x) * e)
    return x * cdf, grad
def run(f):
    def g():
        with tf.GradientTape() as t:
            t.watch(x0); y = f(x0)
        return y, t.gradient(y, x0, output_gradients=up)
    return tf.function(g)
fs = {"cur": run(kernels.gelu), "xla": run(gelu_x), "lean": run(gelu_lean), "copy": tf.function(lambda: (x0 * 2.0, up * 2.0))}
outs = {k: f() for k, f in fs.items()}
for k in ("xla", "lean"):
    print(k, "max diff y", float(tf.reduce_max(tf.abs(outs[k][0] - outs["cur"][0]))), "dx", float(tf.reduce_max(tf.abs(outs[k][1] - outs["cur"][1]))))
t = {k: [] for k in fs}
for i in range(30):
    items = list(fs.items()); items = items if i % 2 == 0 else items[::-1]
    for k, f in items:
        t0 = time.perf_counter(); r = f(); r[1].numpy(); t[k].append(time.perf_counter() - t0)
for k in t: print(k, f"{1e3*np.median(t[k]):.2f} ms")
