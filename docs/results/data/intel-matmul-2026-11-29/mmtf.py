import os, sys, time, json
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2); tf.config.threading.set_inter_op_parallelism_threads(1)
dt = tf.bfloat16 if sys.argv[1] == "bf16" else tf.float32
out = {"lib": "tf", "mode": sys.argv[1], "fpmath": os.environ.get("TF_SET_ONEDNN_FPMATH_MODE")}
for (m, k, n) in [(1024, 384, 1536), (1024, 1536, 384), (1024, 384, 384)]:
    a = tf.random.normal([m, k], dtype=tf.float32); b = tf.random.normal([k, n])
    a = tf.cast(a, dt); b = tf.cast(b, dt)
    f = tf.function(lambda a, b: tf.matmul(a, b))
    for _ in range(5): f(a, b).numpy()
    ts = []
    for _ in range(20):
        t = time.perf_counter(); f(a, b).numpy(); ts.append(time.perf_counter() - t)
    ts.sort(); out[f"{m}x{k}x{n}"] = round(2 * m * k * n / ts[10] / 1e9, 1)
print(json.dumps(out))
