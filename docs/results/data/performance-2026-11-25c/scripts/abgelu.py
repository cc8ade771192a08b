import sys, time, numpy as np, tensorflow as tf
from electra_tf.bench.step import StepOptions, build_step
from electra_tf.layers import kernels
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
steps = {}
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["cur"] = s
orig = kernels.gelu; kernels.gelu = gelu_x
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["xla"] = s
kernels.gelu = orig
for _ in range(2):
    for s in steps.values(): s()
t = {k: [] for k in steps}
for i in range(int(sys.argv[1])):
    order = list(steps.items()) if i % 2 == 0 else list(steps.items())[::-1]
    for k, s in order:
        t0 = time.perf_counter(); s(); t[k].append(time.perf_counter() - t0)
r = np.array(t["cur"]) / np.array(t["xla"])
print(f"cur {np.median(t['cur']):.3f}s xla-gelu {np.median(t['xla']):.3f}s paired median {np.median(r):.3f} [{r.min():.2f}-{r.max():.2f}] n={len(r)}")
