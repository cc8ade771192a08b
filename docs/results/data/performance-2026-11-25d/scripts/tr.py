import time, statistics
import tensorflow as tf
def bench(f, *a, n=40):
    for _ in range(3): f(*a)
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(*a).numpy(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1e3
def tr_f(x, perm): return tf.transpose(x, perm)
def tr_i(x, perm): return tf.bitcast(tf.transpose(tf.bitcast(x, tf.int32), perm), tf.float32)
cases=[([1,4096,1024],[0,2,1]),([1,4096,256],[0,2,1]),([32,128,4,64],[0,2,1,3]),([32,4,128,64],[0,2,1,3])]
for shape,perm in cases:
    x=tf.random.normal(shape)
    # chain of 8 transposes to amortize call overhead
    ff=tf.function(lambda x: tf.add_n([tr_f(x+float(i),perm) for i in range(8)]))
    fi=tf.function(lambda x: tf.add_n([tr_i(x+float(i),perm) for i in range(8)]))
    fa=tf.function(lambda x: tf.add_n([x+float(i) for i in range(8)]))
    print('maxdiff', float(tf.reduce_max(tf.abs(ff(x)-fi(x)))), bool(tf.reduce_all(tr_f(x,perm)==tr_i(x,perm))))
    a=bench(fa,x); b=bench(ff,x); c=bench(fi,x)
    print(shape, perm, f"adds only {a:.2f}  float transpose {(b-a)/8:.3f} ms each  int32 {(c-a)/8:.3f} ms each", flush=True)
