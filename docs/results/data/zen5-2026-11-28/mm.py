"""fp32 matmul [M,384]x[384,1536] and its transpose-grad shapes: TF (oneDNN on) vs torch, 2 threads; medians of 20."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
which = sys.argv[1]
shapes = [(1024, 384, 1536), (1024, 1536, 384), (1024, 384, 384)]
rng = np.random.default_rng(0)
out = {}
for m, k, n in shapes:
    a = rng.standard_normal((m, k)).astype("float32"); b = rng.standard_normal((k, n)).astype("float32")
    if which == "torch":
        import torch; torch.set_num_threads(2)
        A, B = torch.tensor(a), torch.tensor(b)
        f = lambda: torch.matmul(A, B)
    else:
        import tensorflow as tf
        A, B = tf.constant(a), tf.constant(b)
        g = tf.function(lambda: tf.matmul(A, B))
        f = lambda: g().numpy()
    for _ in range(5): f()
    ts = []
    for _ in range(20):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    ms = 1000 * float(np.median(ts))
    out[f"{m}x{k}x{n}"] = {"ms": round(ms, 3), "gflops": round(2 * m * k * n / ms / 1e6, 1)}
print(json.dumps({"impl": which, **out}))
