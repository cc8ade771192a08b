import time, json, numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(1); tf.config.threading.set_inter_op_parallelism_threads(1)
import ml_dtypes
rng = np.random.default_rng(0)
res = {}
for M, K, N in [(24, 768, 384), (24, 192, 384), (24, 384, 768)]:
    W = [rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16) for _ in range(10)]
    B = [rng.standard_normal((N,)).astype(ml_dtypes.bfloat16) for _ in range(10)]
    x = tf.constant(rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16))
    def plain(x):
        return tf.add_n([tf.matmul(x + tf.constant(float(i), tf.bfloat16), tf.constant(W[i])) for i in range(10)])
    def fused(x):
        return tf.add_n([tf.nn.bias_add(tf.matmul(x + tf.constant(float(i), tf.bfloat16), tf.constant(W[i])), tf.constant(B[i])) for i in range(10)])
    def fusedzero(x):
        return tf.add_n([tf.nn.bias_add(tf.matmul(x + tf.constant(float(i), tf.bfloat16), tf.constant(W[i])), tf.zeros([N], tf.bfloat16)) for i in range(10)])
    for name, f in (("plain", plain), ("fused", fused), ("fusedzero", fusedzero)) * 2:
        g = tf.function(f)
        for _ in range(20): g(x)
        ts = []
        for _ in range(300):
            s = time.perf_counter(); g(x).numpy(); ts.append(time.perf_counter() - s)
        res.setdefault(f"{M}x{K}x{N} {name}", []).append(round(1e6 * float(np.median(ts)) / 10, 1))
print(json.dumps(res, indent=0))
