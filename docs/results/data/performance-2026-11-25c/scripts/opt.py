import time, sys, numpy as np, tensorflow as tf
from electra_tf.bench.step import StepOptions, build_step
opts = StepOptions(recipe="small", batch=32, seq=128)
config, model, step = build_step(opts); step()
opt = model.optimizer
vs = model.trainable_variables
n = sum(int(np.prod(v.shape)) for v in vs)
print("variables", len(vs), "floats", n)
grads = [tf.random.normal(v.shape, stddev=1e-3) for v in vs]
@tf.function
def full(): return opt.apply(grads, vs)
@tf.function
def norm_only(): return tf.linalg.global_norm(grads)
@tf.function
def norm_sq(): return tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(g)) for g in grads]))
@tf.function
def where_only():
    f = tf.constant(True)
    return [tf.where(f, g, tf.zeros_like(g)) for g in grads]
@tf.function
def clip_only(): return tf.clip_by_global_norm(grads, 1.0)[0]
fs = dict(full=full, norm=norm_only, normsq=norm_sq, where=where_only, clip=clip_only, step=step)
for f in fs.values(): f(); f()
t = {k: [] for k in fs}
for i in range(10):
    for k, f in fs.items():
        t0 = time.perf_counter(); r = f(); 
        if k != "step": tf.nest.map_structure(lambda x: x.numpy() if hasattr(x,'numpy') else x, r)
        t[k].append(time.perf_counter() - t0)
for k in t: print(k, f"{1000*np.median(t[k]):.1f} ms")
