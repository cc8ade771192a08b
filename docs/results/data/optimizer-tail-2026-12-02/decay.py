import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'shapes.py')).read())
rng = np.random.default_rng(0)
vs = [tf.Variable(rng.normal(0, 0.02, s).astype("float32")) for n, s in shapes if not any(k in n for k in ("gamma","beta","bias"))]
lam = tf.constant(1e-6)
def a():
    for v in vs: v.assign_sub(v * lam)
def b():
    for v in vs: v.assign(v * (1 - lam))
def c():
    for v in vs: tf.raw_ops.ResourceApplyGradientDescent(var=v.handle, alpha=lam, delta=v.read_value())
def d():
    for v in vs: v.assign(v.read_value() * (1 - lam))
@tf.function(jit_compile=True)
def e_inner():
    for v in vs: v.assign(v * (1 - lam))
def e(): e_inner()
def f():
    for v in vs: v.assign_sub(tf.stop_gradient(v.read_value()) * lam)
fns = dict(a=a, b=b, c=c, d=d, e=e)
res = {}
for name in sys.argv[1:]:
    fn = tf.function(fns[name]) if name != "e" else fns[name]
    fn(); fn()
    ts = []
    for _ in range(20):
        t0 = time.perf_counter(); fn(); float(vs[0][0, 0]); ts.append(time.perf_counter() - t0)
    res[name] = round(1000 * float(np.median(ts)), 1)
print(json.dumps(res))
