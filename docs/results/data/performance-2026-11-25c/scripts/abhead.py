# python abhead.py PAIRS: the step with the old generator head (TF's sparse cross-entropy,
# Gumbel-max sampling, tf.argmax) against the new one, alternating in one process.
import sys, time, numpy as np, tensorflow as tf
from electra_tf.bench.step import StepOptions, build_step
from electra_tf.ops import losses, sampling
from electra_tf.pretraining.objectives import base
new_xent, new_argmax = losses.sparse_softmax_cross_entropy, sampling.block_argmax
def old_xent(logits, labels):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(labels, tf.int32), logits=logits)
steps = {}
losses.sparse_softmax_cross_entropy = old_xent
sampling.block_argmax = lambda x: tf.argmax(x, axis=-1, output_type=tf.int32)
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128, overrides=("objective.sampler=gumbel",))); s(); steps["old"] = s
losses.sparse_softmax_cross_entropy, sampling.block_argmax = new_xent, new_argmax
_, _, s = build_step(StepOptions(recipe="small", batch=32, seq=128)); s(); steps["new"] = s
for _ in range(2):
    for s in steps.values(): s()
import resource
def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF); return u.ru_utime + u.ru_stime
t = {k: [] for k in steps}; c = {k: [] for k in steps}
for i in range(int(sys.argv[1])):
    order = list(steps.items()) if i % 2 == 0 else list(steps.items())[::-1]
    for k, s in order:
        c0 = cpu(); t0 = time.perf_counter(); s(); t[k].append(time.perf_counter() - t0); c[k].append(cpu() - c0)
r = np.array(t["old"]) / np.array(t["new"])
print(f"old {np.median(t['old']):.3f}s new {np.median(t['new']):.3f}s paired median {np.median(r):.3f} [{r.min():.2f}-{r.max():.2f}] n={len(r)}")
rc = np.array(c["old"]) / np.array(c["new"])
print(f"cpu old {np.median(c['old']):.3f}s new {np.median(c['new']):.3f}s paired median {np.median(rc):.3f} [{rc.min():.2f}-{rc.max():.2f}]")
