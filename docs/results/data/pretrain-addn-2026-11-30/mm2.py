import sys, zlib, collections
import numpy as np, tensorflow as tf
n = int(sys.argv[1]); reps = int(sys.argv[2])
tf.config.threading.set_intra_op_parallelism_threads(n)
tf.config.threading.set_inter_op_parallelism_threads(1)
rng = np.random.default_rng(0)
a = tf.constant(rng.standard_normal((2048, 384), dtype=np.float32))
b = tf.constant(rng.standard_normal((2048, 1), dtype=np.float32))
f = tf.function(lambda a, b: tf.matmul(a, b, transpose_a=True))
c = collections.Counter(zlib.crc32(f(a, b).numpy().tobytes()) for _ in range(reps))
print(n, dict(c))
