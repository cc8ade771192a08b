import time, numpy as np, tensorflow as tf
from ops import bench
from electra_tf.serving.inference import _gelu
r=np.random.default_rng(0)
x=tf.constant(r.standard_normal((128,256)).astype(np.float32))
w=tf.Variable(r.standard_normal((1024,256)).astype(np.float32)*0.05)
b=tf.Variable(r.standard_normal((1024,)).astype(np.float32)*0.05)
bench("mm bias", lambda x: tf.nn.bias_add(tf.matmul(x,w,transpose_b=True),b), x, n=24)
bench("mm bias gelu(fused?)", lambda x: _gelu(tf.nn.bias_add(tf.matmul(x,w,transpose_b=True),b)), x, n=24)
def unf(x):
    y=tf.nn.bias_add(tf.matmul(x,w,transpose_b=True),b)
    y=tf.identity(y)  # break fusion?
    return y*((tf.math.erf(y*0.7071067811865476)+1.0)*0.5)
bench("mm bias + separate gelu", unf, x, n=24)
