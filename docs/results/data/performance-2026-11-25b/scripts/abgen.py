import time, sys, numpy as np, tensorflow as tf
from electra_tf.bench.step import StepOptions, build_step
from electra_tf.pretraining.objectives import base
opts = StepOptions(recipe="small", batch=32, seq=128)
which = sys.argv[1]
steps = {}
_, m, s = build_step(opts); s(); steps["cur"] = s
orig = base.Objective.compiled if hasattr(base, "Objective") else None
cls = [c for c in vars(base).values() if isinstance(c, type) and "compiled" in vars(c)][0]
orig = cls.compiled
def compiled(self, function):
    if function.__name__ != which: return orig(self, function)
    key = "x_" + function.__name__
    if key not in self._compiled:
        self._compiled[key] = tf.function(function, jit_compile=True, reduce_retracing=True)
    return self._compiled[key]
cls.compiled = compiled
t0=time.perf_counter(); _, _, s = build_step(opts); s(); print("first step", time.perf_counter()-t0); steps["x"] = s
for _ in range(2):
    for s in steps.values(): s()
t = {k: [] for k in steps}
for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 12):
    order = list(steps.items()) if i % 2 == 0 else list(steps.items())[::-1]
    for k, s in order:
        t0 = time.perf_counter(); s(); t[k].append(time.perf_counter() - t0)
r = np.array(t["cur"]) / np.array(t["x"])
print(f"{which} cur {np.median(t['cur']):.3f}s xla {np.median(t['x']):.3f}s paired median {np.median(r):.3f} [{r.min():.2f}-{r.max():.2f}]")
