import os, sys, time, json
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2)
tf.config.threading.set_inter_op_parallelism_threads(1)
rows, k, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
a = tf.constant(rng.random((rows, k), dtype=np.float32) - 0.5)
w = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
b = tf.constant(rng.standard_normal(n).astype(np.float32) * 0.1)
wmax = float(np.abs(w).max())
qw = tf.quantization.quantize(w, -wmax, wmax, tf.qint8, mode="SCALED")
qw_t, wmin_t, wmax_t = tf.constant(qw.output), tf.constant(qw.output_min), tf.constant(qw.output_max)
wf = tf.constant(w); wb = tf.constant(w.astype(tf.bfloat16.as_numpy_dtype))

@tf.function(jit_compile=False)
def f32(x):
    return tf.nn.bias_add(tf.matmul(x, wf), b)

@tf.function
def bf16(x):
    return tf.cast(tf.nn.bias_add(tf.matmul(tf.cast(x, tf.bfloat16), wb), tf.cast(b, tf.bfloat16)), tf.float32)

@tf.function
def q8(x):
    lo, hi = tf.reduce_min(x), tf.reduce_max(x)
    q = tf.quantization.quantize(x, lo, hi, tf.quint8, mode="MIN_FIRST")
    return tf.raw_ops.QuantizedMatMulWithBiasAndDequantize(
        a=q.output, b=qw_t, bias=b, min_a=q.output_min, max_a=q.output_max,
        min_b=wmin_t, max_b=wmax_t, min_freezed_output=-1.0, max_freezed_output=1.0,
        Toutput=tf.float32, input_quant_mode="MIN_FIRST")

ref = f32(a).numpy()
out = {}
for name, fn in [("f32", f32), ("bf16", bf16), ("q8", q8)] * 2:
    y = fn(a)
    for _ in range(20): fn(a)
    ts = []
    for _ in range(200):
        t = time.perf_counter(); fn(a).numpy(); ts.append(time.perf_counter() - t)
    out[name] = [round(float(np.median(ts)) * 1e6, 1), round(float(np.abs(y.numpy() - ref).max() / np.abs(ref).max()), 4)]
print(json.dumps({"shape": [rows, k, n], "us_and_relerr": out}))
