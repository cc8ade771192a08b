import os, time, statistics
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(2)
M=4096
def bench(f, *a, n=30):
    f(*a)
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(*a).numpy(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1e3
def mt(t):  # transpose not folded: through a 3-D view
    return tf.reshape(tf.transpose(tf.reshape(t,[1]+t.shape.as_list()),[0,2,1]),[t.shape[1],t.shape[0]])
for K,N in [(256,1024),(1024,256),(256,256)]:
    x=tf.random.normal([M,K]); dy=tf.random.normal([M,N])
    ref=tf.matmul(x,dy,transpose_a=True)
    vs={
     'plain': tf.function(lambda x,dy: tf.matmul(x,dy,transpose_a=True)),
     'cur_Tdy': tf.function(lambda x,dy: tf.matmul(x, mt(dy), transpose_a=True, transpose_b=True)),
     'cur_Tx': tf.function(lambda x,dy: tf.matmul(mt(x), dy)),
     'outT': tf.function(lambda x,dy: tf.transpose(tf.matmul(dy,x,transpose_a=True))),
     'outT_Tdy': tf.function(lambda x,dy: tf.transpose(tf.matmul(mt(dy),x))),
     'chunk8': tf.function(lambda x,dy: tf.add_n([tf.matmul(a,b,transpose_a=True) for a,b in zip(tf.split(x,8),tf.split(dy,8))])),
     'chunk4': tf.function(lambda x,dy: tf.add_n([tf.matmul(a,b,transpose_a=True) for a,b in zip(tf.split(x,4),tf.split(dy,4))])),
     'bmm8': tf.function(lambda x,dy: tf.reduce_sum(tf.matmul(tf.reshape(x,[8,M//8,K]),tf.reshape(dy,[8,M//8,N]),transpose_a=True),0)),
    }
    fl=2*M*K*N
    for k,f in vs.items():
        err=float(tf.reduce_max(tf.abs(f(x,dy)-ref)))
        ms=bench(f,x,dy)
        print(f"K={K} N={N} {k:10s} {ms:6.2f} ms {fl/ms/1e6:6.1f} GFLOP/s err {err:.1e}", flush=True)
