import time, numpy as np, tensorflow as tf
from ops import bench
r=np.random.default_rng(0)
for shp in [(4096,1024),(4096,256),(4096,768)]:
    x=tf.constant(r.standard_normal(shp).astype(np.float32))
    bench(f"2d {shp} f32", lambda x: tf.transpose(x), x, n=8)
    bench(f"2d {shp} int32", lambda x: tf.bitcast(tf.transpose(tf.bitcast(x,tf.int32)),tf.float32), x, n=8)
x=tf.constant(r.standard_normal((32,128,4,64)).astype(np.float32))
bench("train qkv 4d f32", lambda x: tf.transpose(x,[0,2,1,3]), x, n=8)
bench("train qkv 4d int32", lambda x: tf.bitcast(tf.transpose(tf.bitcast(x,tf.int32),[0,2,1,3]),tf.float32), x, n=8)
