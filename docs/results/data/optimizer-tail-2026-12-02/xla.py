import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'shapes.py')).read())
rng = np.random.default_rng(0)
names = [n for n, s in shapes]
vs = [tf.Variable(rng.normal(0, 0.02, s).astype("float32")) for n, s in shapes]
ms = [tf.Variable(tf.zeros(s)) for n, s in shapes]
vv = [tf.Variable(tf.zeros(s)) for n, s in shapes]
gs = [tf.constant(rng.normal(0, 0.01, s).astype("float32")) for n, s in shapes]
dec = [not any(k in n for k in ("gamma","beta","bias")) for n in names]
b1, b2, eps = 0.9, 0.999, 1e-6
def adam_tf(scale, lr, t):
    b1p = tf.pow(b1, t); b2p = tf.pow(b2, t)
    for g, v, m, u in zip(gs, vs, ms, vv):
        tf.raw_ops.ResourceApplyAdam(var=v.handle, m=m.handle, v=u.handle, beta1_power=b1p, beta2_power=b2p, lr=lr, beta1=tf.constant(b1), beta2=tf.constant(b2), epsilon=tf.constant(eps), grad=g)
def update_xla_body(grads, scale, lr, t):
    b1p = tf.pow(b1, t); b2p = tf.pow(b2, t)
    rate = lr * tf.sqrt(1 - b2p) / (1 - b1p)
    for g, v, m, u, d in zip(grads, vs, ms, vv, dec):
        g = g * scale
        w = v.read_value()
        if d: w = w - w * (0.01 * lr)
        mn = m.read_value() + (g - m.read_value()) * (1 - b1)
        un = u.read_value() + (tf.square(g) - u.read_value()) * (1 - b2)
        w = w - rate * mn / (tf.sqrt(un) + eps)
        m.assign(mn); u.assign(un); v.assign(w)
update_xla = tf.function(update_xla_body, jit_compile=True)
def norm_tf():
    return tf.sqrt(2.0 * tf.add_n([tf.nn.l2_loss(g) for g in gs]))
@tf.function(jit_compile=True)
def norm_xla():
    return tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(g)) for g in gs]))
def adam_only_tf(): adam_tf(1.0, tf.constant(1e-4), tf.constant(3.0))
def adam_only_xla(): update_xla(gs, tf.constant(1.0), tf.constant(1e-4), tf.constant(3.0))
def norm_t(): return norm_tf()
def norm_x(): return norm_xla()
def full_xla():
    n = norm_tf(); s = tf.minimum(1.0 / n, 1.0)
    update_xla(gs, s, tf.constant(1e-4), tf.constant(3.0))
fns = dict(adam_tf=adam_only_tf, adam_xla=adam_only_xla, norm_tf=norm_t, norm_xla=norm_x, full_xla=full_xla)
res = {}
for name in sys.argv[1:]:
    fn = tf.function(fns[name])
    fn(); fn()
    ts = []
    for _ in range(20):
        t0 = time.perf_counter(); fn(); float(vs[0][0, 0]); ts.append(time.perf_counter() - t0)
    res[name] = round(1000 * float(np.median(ts)), 1)
print(json.dumps(res))
