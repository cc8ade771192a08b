import time, numpy as np, tensorflow as tf
from electra_tf.ops import random as erandom, sampling, losses
R, V, D = 608, 30522, 128
rng = np.random.default_rng(0)
h = tf.constant(rng.normal(size=(R, D)).astype("float32"))
E = tf.Variable(rng.normal(size=(V, D)).astype("float32") * 0.05)
b = tf.Variable(np.zeros(V, "float32"))
targets = tf.constant(rng.integers(0, V, size=R).astype("int32"))
keys = erandom.row_keys(1, 3, 7, tf.range(R))
def run(new):
    with tf.GradientTape() as tape:
        logits = tf.matmul(h, E, transpose_b=True) + b
        if new: per = losses.sparse_softmax_cross_entropy(logits, targets)
        else: per = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
        loss = tf.reduce_sum(per) / R
    g = tape.gradient(loss, [E, b])
    lg = tf.stop_gradient(logits)
    if new:
        s = sampling.inverse_cdf_sample(lg, erandom.uniform(keys, 1)[:, 0]); p = sampling.block_argmax(lg)
    else:
        s = sampling.gumbel_max_sample(lg, erandom.uniform(keys, V)); p = tf.argmax(lg, -1, output_type=tf.int32)
    return loss, g, s, p
fs = {"old": tf.function(lambda: run(False)), "new": tf.function(lambda: run(True)),
      "samp_old": tf.function(lambda: sampling.gumbel_max_sample(h[:, :1] * E[:, 0], erandom.uniform(keys, V))),
      "samp_new": tf.function(lambda: sampling.inverse_cdf_sample(h[:, :1] * E[:, 0], erandom.uniform(keys, 1)[:, 0])),
      "argmax_old": tf.function(lambda: tf.argmax(h[:, :1] * E[:, 0], -1)), "argmax_new": tf.function(lambda: sampling.block_argmax(h[:, :1] * E[:, 0]))}
for f in fs.values(): f()
t = {k: [] for k in fs}
for i in range(20):
    items = list(fs.items()); items = items if i % 2 == 0 else items[::-1]
    for k, f in items:
        t0 = time.perf_counter(); r = f(); tf.nest.map_structure(lambda x: x.numpy(), r); t[k].append(time.perf_counter() - t0)
for k in t: print(k, f"{1e3*np.median(t[k]):.1f} ms")
