"""Optimizer tail variants over MiniLM-shaped variables: norm + clip + decay + ResourceApplyAdam."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'shapes.py')).read())
rng = np.random.default_rng(0)
names = [n for n, s in shapes]
vs = [tf.Variable(rng.normal(0, 0.02, s).astype("float32")) for n, s in shapes]
ms = [tf.Variable(tf.zeros(s)) for n, s in shapes]
uu = [tf.Variable(tf.zeros(s)) for n, s in shapes]
gs = [tf.constant(rng.normal(0, 0.01, s).astype("float32")) for n, s in shapes]
dec = [not any(k in n for k in ("gamma","beta","bias")) for n in names]
lr = tf.constant(1e-4); lam = tf.constant(1e-6)
b1p, b2p = tf.constant(0.9**3), tf.constant(0.999**3)
def adam(grads):
    for g, v, m, u in zip(grads, vs, ms, uu):
        tf.raw_ops.ResourceApplyAdam(var=v.handle, m=m.handle, v=u.handle, beta1_power=b1p, beta2_power=b2p, lr=lr, beta1=tf.constant(0.9), beta2=tf.constant(0.999), epsilon=tf.constant(1e-6), grad=g)
def scale_of():
    norm = tf.linalg.global_norm(gs)
    return tf.minimum(1.0 / norm, 1.0)  # clip 1
def cur():
    s = scale_of()
    grads = [g * s for g in gs]
    for v, d in zip(vs, dec):
        if d: v.assign_sub(v * lam)
    adam(grads)
def mulassign():
    s = scale_of()
    grads = [g * s for g in gs]
    for v, d in zip(vs, dec):
        if d: v.assign(v * (1 - lam))
    adam(grads)
@tf.function(jit_compile=True)
def xla_part(s):
    for v, d in zip(vs, dec):
        if d: v.assign(v - v * lam)
    return [g * s for g in gs]
def xla():
    s = scale_of()
    adam(xla_part(s))
def adam_only():
    adam(gs)
fns = dict(cur=cur, mulassign=mulassign, xla=xla, adam_only=adam_only)
res = {}
for name in sys.argv[1:]:
    fn = tf.function(fns[name])
    fn(); fn()
    ts = []
    for _ in range(15):
        t0 = time.perf_counter(); fn(); float(vs[0][0, 0]); ts.append(time.perf_counter() - t0)
    res.setdefault(name, []).append(round(1000 * float(np.median(ts)), 1))
print(json.dumps(res))
