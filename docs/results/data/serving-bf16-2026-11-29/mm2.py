"""TensorFlow's float32 products by rows, 1 or 2 intra-op threads: `python mm2.py 1|2`."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
T=int(sys.argv[1])
tf.config.threading.set_intra_op_parallelism_threads(T)
tf.config.threading.set_inter_op_parallelism_threads(1)
def tm(f, n):
    for _ in range(10): f()
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return float(np.median(ts))
out={}
for K,N in ((384,1536),(384,384),(1536,384)):
  for M in (27,64,128,256,512):
    a=tf.constant(np.random.rand(M,K).astype(np.float32)); W=tf.Variable(np.random.rand(K,N).astype(np.float32)); B=tf.Variable(np.zeros(N,np.float32))
    @tf.function
    def f(x):
        return tf.reduce_sum(tf.stack([tf.nn.bias_add(tf.matmul(x+float(i), W), B)[0,0] for i in range(10)]))
    t=tm(lambda: f(a).numpy(), 100 if M<200 else 30)
    out[f"{M}x{K}x{N}"]=round(10*2*M*K*N/t/1e9,1)
print(T, json.dumps(out))
