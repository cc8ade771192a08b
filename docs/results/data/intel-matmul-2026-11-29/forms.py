import sys, time, json
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2); tf.config.threading.set_inter_op_parallelism_threads(1)
M = int(sys.argv[1]) if len(sys.argv) > 1 else 1280
def t(f, *a):
    for _ in range(5): f(*a).numpy()
    ts = []
    for _ in range(25):
        s = time.perf_counter(); f(*a).numpy(); ts.append(time.perf_counter() - s)
    ts.sort(); return ts[12]
res = {}
for K, N in [(384, 1536), (1536, 384), (384, 384)]:
    fl = 2 * M * K * N / 1e9
    x = tf.random.normal([M, K]); w = tf.random.normal([K, N]); wt = tf.transpose(w) + 0; dy = tf.random.normal([M, N]); xt = tf.transpose(x) + 0; dyt = tf.transpose(dy) + 0
    F = {
      "fwd x@w": (tf.function(lambda a, b: tf.matmul(a, b)), x, w),
      "fwd x@wt^T": (tf.function(lambda a, b: tf.matmul(a, b, transpose_b=True)), x, wt),
      "dx dy@w^T": (tf.function(lambda a, b: tf.matmul(a, b, transpose_b=True)), dy, w),
      "dx dy@wt": (tf.function(lambda a, b: tf.matmul(a, b)), dy, wt),
      "dw x^T@dy": (tf.function(lambda a, b: tf.matmul(a, b, transpose_a=True)), x, dy),
      "dw xt@dy": (tf.function(lambda a, b: tf.matmul(a, b)), xt, dy),
      "dwT dy^T@x": (tf.function(lambda a, b: tf.matmul(a, b, transpose_a=True)), dy, x),
      "dwT dyt@x": (tf.function(lambda a, b: tf.matmul(a, b)), dyt, x),
    }
    for k, (f, a, b) in F.items():
        res[f"{K}x{N} {k}"] = round(fl / t(f, a, b), 0)
print(json.dumps(res, indent=0))
