"""Microbenchmark: ElectraAdamW.apply (current) vs an XLA-compiled clip+decay+Adam, MiniLM-shaped."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras
from electra_tf.pretraining.optimizer import ElectraAdamW

mode = sys.argv[1]
exec(open(os.path.join(os.path.dirname(__file__), 'shapes.py')).read())  # the shapes it ran with
rng = np.random.default_rng(0)
variables = [keras.Variable(rng.normal(0, 0.02, s).astype("float32"), name=n.replace("/", "_")) for n, s in shapes]
grads = [tf.constant(rng.normal(0, 0.01, s).astype("float32")) for n, s in shapes]
opt = ElectraAdamW(learning_rate=1e-4, weight_decay=float(os.environ.get("WD","0.01")), clip_norm=float(os.environ.get("CLIP","1.0")))
opt.build(variables)

if mode == "A":
    @tf.function
    def step(grads):
        return opt.apply(list(grads), variables)
else:
    decayed = [opt._use_weight_decay(v) for v in variables]
    ms = [opt._momentums[opt._get_variable_index(v)] for v in variables]
    vs = [opt._velocities[opt._get_variable_index(v)] for v in variables]
    @tf.function(jit_compile=True)
    def fused(grads, lr, t):
        sq = tf.add_n([tf.reduce_sum(tf.square(g)) for g in grads])
        norm = tf.sqrt(sq)
        finite = tf.math.is_finite(norm)
        scale = 1.0 * tf.minimum(1.0 / norm, 1.0 / 1.0)
        b1, b2, eps = 0.9, 0.999, 1e-6
        rate = lr * tf.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        ok = tf.cast(finite, tf.float32)
        for g, var, m, v, d in zip(grads, variables, ms, vs, decayed):
            g = tf.where(finite, g * scale, 0.0)
            w = var.value
            if d:
                w = w - w * (0.01 * lr * ok)
            mn = m.value + (g - m.value) * ((1 - b1) * ok)
            vn = v.value + (g * g - v.value) * ((1 - b2) * ok)
            w = w - (rate * ok) * mn / (tf.sqrt(vn) + eps * tf.sqrt(1 - b2 ** t))
            m.assign(mn); v.assign(vn); var.assign(w)
        return finite
    @tf.function
    def step(grads):
        t = tf.cast(opt.iterations + 1, tf.float32)
        out = fused(list(grads), tf.constant(1e-4), t)
        opt.iterations.assign_add(1)
        return out

step(grads); step(grads)
times = []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 30):
    t0 = time.perf_counter(); step(grads); 
    float(variables[0].value[0, 0]); times.append(time.perf_counter() - t0)
print(json.dumps({"mode": mode, "median_ms": round(1000 * float(np.median(times)), 1),
                  "min_ms": round(1000 * min(times), 1),
                  "checksum": float(sum(float(tf.reduce_sum(v.value)) for v in variables))}))
