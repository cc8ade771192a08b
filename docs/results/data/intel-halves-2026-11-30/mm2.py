"""fp32 products of a MiniLM block at 1024 rows: TF one product on 2 intra-op threads, against
the same rows as two halves (independent products) on 1 intra-op x 2 inter-op threads; torch 2 threads."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
which = sys.argv[1]
shapes = [(1024, 384, 1536), (1024, 1536, 384), (1024, 384, 384)]
rng = np.random.default_rng(0)
out = {}
if which.startswith("tf"):
    import tensorflow as tf
    if which == "tf_halves":
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(2)
    elif which == "tf1":
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    else:
        tf.config.threading.set_intra_op_parallelism_threads(2)
        tf.config.threading.set_inter_op_parallelism_threads(1)
for m, k, n in shapes:
    a = rng.standard_normal((m, k)).astype("float32"); b = rng.standard_normal((k, n)).astype("float32")
    if which.startswith("torch"):
        import torch; torch.set_num_threads(1 if which == "torch1" else 2)
        A, B = torch.tensor(a), torch.tensor(b)
        f = lambda: torch.matmul(A, B)
    elif which == "tf_halves":
        A1, A2, B = tf.constant(a[: m // 2]), tf.constant(a[m // 2:]), tf.constant(b)
        g = tf.function(lambda: (tf.matmul(A1, B), tf.matmul(A2, B)))
        f = lambda: [t.numpy() for t in g()]
    else:
        A, B = tf.constant(a), tf.constant(b)
        g = tf.function(lambda: tf.matmul(A, B))
        f = lambda: g().numpy()
    for _ in range(5): f()
    ts = []
    for _ in range(30):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    ms = 1000 * float(np.median(ts))
    out[f"{m}x{k}x{n}"] = {"ms": round(ms, 3), "gflops": round(2 * m * k * n / ms / 1e6, 1)}
print(json.dumps({"impl": which, **out}))
