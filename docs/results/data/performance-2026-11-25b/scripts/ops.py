import sys, time, numpy as np, tensorflow as tf
def bench(name, op, x0, n=48):
    @tf.function
    def f(x):
        outs=[]
        for i in range(n):
            outs.append(op(x + float(i)))   # independent chains? no: serialize via add
        return tf.add_n([tf.reduce_sum(o) for o in outs])
    @tf.function
    def g(x):
        outs=[]
        for i in range(n):
            outs.append(x + float(i))
        return tf.add_n([tf.reduce_sum(o) for o in outs])
    f(x0); g(x0)
    tf_, tg=[],[]
    for _ in range(60):
        t0=time.perf_counter(); f(x0).numpy(); tf_.append(time.perf_counter()-t0)
        t0=time.perf_counter(); g(x0).numpy(); tg.append(time.perf_counter()-t0)
    print(f"{name:40s} {(np.median(tf_)-np.median(tg))/n*1e6:7.1f} us/op")

if __name__ == "__main__":
    # batch 1 (48 ops per graph) or 32 (12 ops per graph): python ops.py 1|32
    B = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    N = 48 if B == 1 else 12
    r = np.random.default_rng(0)
    qkv=tf.constant(r.standard_normal((B,128,3,4,64)).astype(np.float32))
    bench("transpose5d f32", lambda x: tf.transpose(x,[2,0,3,1,4]), qkv, n=N)
    bench("transpose5d via int32", lambda x: tf.bitcast(tf.transpose(tf.bitcast(x,tf.int32),[2,0,3,1,4]),tf.float32), qkv, n=N)
    ctx=tf.constant(r.standard_normal((B,4,128,64)).astype(np.float32))
    bench("transpose4d f32", lambda x: tf.transpose(x,[0,2,1,3]), ctx, n=N)
    bench("transpose4d via int32", lambda x: tf.bitcast(tf.transpose(tf.bitcast(x,tf.int32),[0,2,1,3]),tf.float32), ctx, n=N)
    sc=tf.constant(r.standard_normal((B,4,128,128)).astype(np.float32))
    bench("softmax mkl", lambda x: tf.nn.softmax(x), sc, n=N)
    def sm(x):
        e=tf.exp(x-tf.reduce_max(x,-1,keepdims=True)); return e/tf.reduce_sum(e,-1,keepdims=True)
    bench("softmax manual", sm, sc, n=N)
    q=tf.constant(r.standard_normal((B,4,128,64)).astype(np.float32))
    bench("bmm qk^T", lambda x: tf.matmul(x,q,transpose_b=True), q, n=N)
    bench("bmm pv", lambda x: tf.matmul(x,q), sc, n=N)