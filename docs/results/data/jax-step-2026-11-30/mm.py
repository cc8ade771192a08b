import os, sys, time, json
import numpy as np
M, K, N = [int(x) for x in sys.argv[1:4]]
a = np.random.rand(M, K).astype("float32"); b = np.random.rand(K, N).astype("float32")
if os.environ.get("W") == "tf":
    import tensorflow as tf
    f = tf.function(lambda x, y: tf.matmul(x, y)); x, y = tf.constant(a), tf.constant(b)
    run = lambda: f(x, y).numpy()
else:
    import jax, jax.numpy as jnp
    f = jax.jit(lambda x, y: x @ y); x, y = jnp.asarray(a), jnp.asarray(b)
    run = lambda: f(x, y).block_until_ready()
for _ in range(5): run()
ts = []
for _ in range(30):
    t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
med = float(np.median(ts))
print(json.dumps({"who": os.environ.get("W", "jax"), "flags": os.environ.get("XLA_FLAGS", ""), "shape": [M, K, N], "ms": round(med * 1e3, 3), "gflops": round(2 * M * K * N / med / 1e9, 1)}))
