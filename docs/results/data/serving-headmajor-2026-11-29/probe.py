"""Head-major QKV projection probe: one lane's attention (6 heads of 32, H 384) x 12 units, bf16
constants, [B, S] batches; A current (matmul, transpose), B head-major batched product, C B with
the query scale folded into its kernel. Prints us per call and max diff vs A."""
import json, math, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2); tf.config.threading.set_inter_op_parallelism_threads(2)
H, h, d, U = 384, 6, 32, 12
dt = tf.bfloat16 if "f32" not in sys.argv else tf.float32
rng = np.random.default_rng(0)
W = [rng.normal(0, 0.05, (H, 3 * h * d)).astype(np.float32) for _ in range(U)]
Bq = [rng.normal(0, 0.05, (3 * h * d,)).astype(np.float32) for _ in range(U)]
def c(a): return tf.constant(a.astype(dt.as_numpy_dtype))
def headmajor(w, b, fold):
    w = w.reshape(H, 3, h, d).transpose(1, 2, 0, 3).copy()  # [3, h, H, d]
    b = b.reshape(3, h, 1, d).copy()
    if fold:
        w[0] /= math.sqrt(d); b[0] /= math.sqrt(d)
    return c(w.reshape(3 * h, H, d)), c(b.reshape(3 * h, 1, d))
CA = [(c(w), c(b)) for w, b in zip(W, Bq)]
CB = [headmajor(w, b, False) for w, b in zip(W, Bq)]
CC = [headmajor(w, b, True) for w, b in zip(W, Bq)]
def attend(q, k, v, bias, scale):
    if scale: q = q * (1.0 / math.sqrt(d))
    p = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) + bias)
    return tf.matmul(p, v)  # [B, h, S, d]
def out(ctx, B, S):
    return tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [-1, h * d])
@tf.function(input_signature=[tf.TensorSpec([None, None, H], dt), tf.TensorSpec([None, 1, 1, None], dt)])
def fa(x, bias):
    B, S = tf.shape(x)[0], tf.shape(x)[1]; flat = tf.reshape(x, [-1, H]); outs = []
    for w, b in CA:
        qkv = tf.nn.bias_add(tf.matmul(flat, w), b)
        qkv = tf.transpose(tf.reshape(qkv, [B, S, 3, h, d]), [2, 0, 3, 1, 4])
        q, k, v = tf.unstack(qkv)
        outs.append(out(attend(q, k, v, bias, True), B, S))
    return tf.add_n(outs)
def make(C, scale):
    @tf.function(input_signature=[tf.TensorSpec([None, None, H], dt), tf.TensorSpec([None, 1, 1, None], dt)])
    def f(x, bias):
        B, S = tf.shape(x)[0], tf.shape(x)[1]; outs = []
        for w, b in C:
            qkv = tf.matmul(x[:, None], w) + b  # [B, 3h, S, d]
            q, k, v = tf.split(qkv, 3, axis=1)
            outs.append(out(attend(q, k, v, bias, scale), B, S))
        return tf.add_n(outs)
    return f
fb, fc = make(CB, True), make(CC, False)
res = {}
for B, S in ((1, 27), (1, 64), (32, 40)):
    x = tf.cast(tf.random.normal([B, S, H]), dt); bias = tf.zeros([B, 1, 1, S], dt)
    ref = tf.cast(fa(x, bias), tf.float32).numpy()
    fns = {"A": fa, "B": fb, "C": fc}
    for f in fns.values():
        for _ in range(20): f(x, bias)
    ts = {k: [] for k in fns}
    for i in range(300 if B == 1 else 40):
        for k, f in fns.items():
            s = time.perf_counter(); f(x, bias).numpy(); ts[k].append(time.perf_counter() - s)
    row = {k: round(1e6 * float(np.median(v)), 1) for k, v in ts.items()}
    row["diff"] = {k: float(np.abs(tf.cast(fns[k](x, bias), tf.float32).numpy() - ref).max()) for k in "BC"}
    row["ref_scale"] = float(np.abs(ref).max())
    res[f"{B}x{S}"] = row
print(json.dumps({"dtype": dt.name, **res}))
