"""One [27, 384] x [384, 1536] product (batch 1's feed-forward shape), 10 chained, in TensorFlow
(matmul, 1x1 conv, batch matmul), PyTorch and numpy: `T=1|2 python mm.py tf|torch|np`."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
M, K, N = 27, 384, 1536
rng = np.random.default_rng(0)
a = rng.standard_normal((M, K), np.float32); w = rng.standard_normal((K, N), np.float32); bias = rng.standard_normal(N).astype(np.float32)
def tm(f, n=300):
    for _ in range(20): f()
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return round(1e6*float(np.median(ts)),1)
res={}
which=sys.argv[1]
if which=="tf":
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(int(os.environ.get("T","2")))
    tf.config.threading.set_inter_op_parallelism_threads(1)
    A=tf.constant(a); W=tf.Variable(w); B=tf.Variable(bias)
    X=tf.constant(a[None,None])  # [1,1,M,K]
    W4=tf.Variable(w[None,None])
    # 10 chained products to amortize call overhead
    @tf.function
    def mm(x):
        for _ in range(10): x = tf.nn.bias_add(tf.matmul(x, W), B)[:, :K]
        return x
    @tf.function
    def conv(x):
        for _ in range(10): x = tf.nn.bias_add(tf.nn.conv2d(x, W4, 1, "VALID"), B)[..., :K]
        return x
    @tf.function
    def bmm(x):
        for _ in range(10): x = tf.nn.bias_add(tf.matmul(x[None], W[None])[0], B)[:, :K]
        return x
    @tf.function
    def empty(x):
        for _ in range(10): x = x[:, :K] + 1.0
        return x
    res["tf matmul"]=tm(lambda: mm(A).numpy())
    res["tf conv1x1"]=tm(lambda: conv(X).numpy())
    res["tf batchmatmul"]=tm(lambda: bmm(A).numpy())
    res["tf empty"]=tm(lambda: empty(A).numpy())
elif which=="torch":
    import torch
    torch.set_num_threads(int(os.environ.get("T","2")))
    A=torch.from_numpy(a); W=torch.from_numpy(w.T.copy()); B=torch.from_numpy(bias)
    def f():
        x=A
        with torch.no_grad():
            for _ in range(10): x=torch.nn.functional.linear(x,W,B)[:, :K]
        return x
    res["torch linear"]=tm(f)
elif which=="np":
    def f():
        x=a
        for _ in range(10): x=(x@w+bias)[:, :K]
    res["numpy"]=tm(f)
print(json.dumps({"threads": int(os.environ.get("T", "2")), "us_per_10_products": res,
                  "gflops": {k: round(10 * 2 * M * K * N / (v * 1e3), 1) for k, v in res.items()}}))
