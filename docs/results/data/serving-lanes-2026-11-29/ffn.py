"""Batch-1 feed-forward (6 blocks' worth) at [27, 384]: one chain against two half chains."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
intra, inter, rows = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
tf.config.threading.set_intra_op_parallelism_threads(intra)
tf.config.threading.set_inter_op_parallelism_threads(inter)
rng = np.random.default_rng(0)
W1 = [tf.constant(rng.normal(0, .02, (384, 1536)), tf.float32) for _ in range(6)]
W2 = [tf.constant(rng.normal(0, .02, (1536, 384)), tf.float32) for _ in range(6)]
V1 = [tf.Variable(w) for w in W1]; V2 = [tf.Variable(w) for w in W2]
S1 = [[tf.Variable(w[:, i*768:(i+1)*768]) for i in range(2)] for w in W1]; S2 = [[tf.Variable(w[i*768:(i+1)*768]) for i in range(2)] for w in W2]
@tf.function
def plain(x):
    for a, b in zip(V1, V2):
        x = x + tf.matmul(tf.nn.gelu(tf.matmul(x, a)), b)
    return x
@tf.function
def split(x):
    for a, b in zip(S1, S2):
        h = [tf.matmul(tf.nn.gelu(tf.matmul(x, a[i])), b[i]) for i in range(2)]
        x = x + h[0] + h[1]
    return x
x = tf.constant(rng.normal(0, 1, (rows, 384)), tf.float32)
np.testing.assert_allclose(plain(x).numpy(), split(x).numpy(), atol=1e-4)
res = {"intra": intra, "inter": inter, "rows": rows}
for name, f in (("plain", plain), ("split", split)) * 2:
    for _ in range(20): f(x)
    ts = []
    for _ in range(200):
        t = time.perf_counter(); f(x).numpy(); ts.append(time.perf_counter() - t)
    res.setdefault(name, []).append(round(1000 * float(np.median(ts)), 3))
print(json.dumps(res))
