import os, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf, keras, numpy as np
from electra_tf.pretraining.optimizer import ElectraAdamW
shapes = [(30522, 384), (512, 384), (2, 384)] + [s for _ in range(6) for s in [(384, 384)]*4 + [(384,)]*4 + [(384, 1536), (1536,), (1536, 384), (384,)] + [(384,)]*4]
shapes += [(384,)] * (103 - len(shapes))
vs = [keras.Variable(np.random.randn(*s).astype("float32") * 0.02, name=f"kernel{i}") for i, s in enumerate(shapes)]
gs = [tf.constant(np.random.randn(*s).astype("float32") * 0.01) for s in shapes]
print(sum(np.prod(s) for s in shapes) / 1e6, "M params")
def bench(name, step):
    f = tf.function(step)
    t = time.perf_counter(); f(); first = time.perf_counter() - t
    ts = []
    for _ in range(20):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    print(name, "first", round(first, 2), "median", round(np.median(ts) * 1000, 1), "ms")
opt = ElectraAdamW(learning_rate=1e-4, weight_decay=0.01, bias_correction=False)
opt.build(vs)
bench("keras ElectraAdamW", lambda: opt.apply(gs, vs))
ms = [tf.Variable(tf.zeros(s)) for s in shapes]; vv = [tf.Variable(tf.zeros(s)) for s in shapes]
def fused():
    norm = tf.linalg.global_norm(gs)
    g2, _ = tf.clip_by_global_norm(gs, 1.0, use_norm=norm)
    ok = tf.math.is_finite(norm)
    def go():
        for v, m, s, g in zip(vs, ms, vv, g2):
            v.value.assign_sub(v.value * 1e-6)
            tf.raw_ops.ResourceApplyAdam(var=v.value.handle, m=m.handle, v=s.handle, beta1_power=0.0, beta2_power=0.0, lr=1e-4, beta1=0.9, beta2=0.999, epsilon=1e-6, grad=g)
        return tf.constant(True)
    return tf.cond(ok, go, lambda: tf.constant(False))
bench("fused ResourceApplyAdam", fused)
