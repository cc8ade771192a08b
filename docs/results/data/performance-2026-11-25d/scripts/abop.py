# python ablate.py ROUNDS: the step as it is / GELU replaced by ReLU / no dropout (upper bounds on what a
# faster GELU or a faster dropout could give), 3 builds in one process, rotating order, paired per round.
import sys, time, numpy as np
from electra_tf.bench.step import StepOptions, build_step
from electra_tf.layers import kernels
sys.path.insert(0, "/tmp/s28/op"); from gelu_py import gelu_op
steps = {}
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["current"] = s
gelu = kernels.gelu_activation
kernels.gelu_activation = lambda: gelu_op
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["gelu_op"] = s
kernels.gelu_activation = gelu
kernels.gelu_activation = lambda: "relu"
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["relu"] = s
kernels.gelu_activation = gelu
for _ in range(2):
    for s in steps.values(): s()
t = {k: [] for k in steps}
names = list(steps)
for i in range(int(sys.argv[1])):
    for k in names[i % 3:] + names[:i % 3]:
        t0 = time.perf_counter(); steps[k](); t[k].append(time.perf_counter() - t0)
for k in names:
    r = np.array(t["current"]) / np.array(t[k])
    print(f"{k} median {np.median(t[k]):.3f}s paired current/{k} {np.median(r):.3f} [{r.min():.2f}-{r.max():.2f}] n={len(r)}")
