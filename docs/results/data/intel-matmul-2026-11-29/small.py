import sys, time, json
import tensorflow as tf
th = int(sys.argv[1])
tf.config.threading.set_intra_op_parallelism_threads(th); tf.config.threading.set_inter_op_parallelism_threads(1)
def t(f, *a, n=300):
    for _ in range(20): f(*a)
    ts = []
    for _ in range(n):
        s = time.perf_counter(); f(*a); ts.append(time.perf_counter() - s)
    ts.sort(); return ts[n // 2]
res = {"threads": th}
for M in (27, 64, 128):
  for K, N in [(384, 1536), (1536, 384), (384, 384)]:
    fl = 2 * M * K * N / 1e9
    x = tf.random.normal([M, K]); w = tf.Variable(tf.random.normal([K, N]))
    wb = tf.Variable(tf.cast(w, tf.bfloat16))
    # chain of 10 products inside one function to amortise dispatch
    f32 = tf.function(lambda x: tf.add_n([tf.matmul(x + float(i), w) for i in range(10)]))
    fb = tf.function(lambda x: tf.add_n([tf.matmul(tf.cast(x + float(i), tf.bfloat16), wb) for i in range(10)]))
    fbc = tf.function(lambda x: tf.add_n([tf.matmul(tf.cast(x + float(i), tf.bfloat16), tf.cast(w, tf.bfloat16)) for i in range(10)]))
    res[f"{M}:{K}x{N}"] = [round(10 * fl / t(f, x), 0) for f in (f32, fb, fbc)]
print(json.dumps(res))
