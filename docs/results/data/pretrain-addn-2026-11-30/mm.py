import os, sys, zlib
import numpy as np, tensorflow as tf
n = int(sys.argv[1]); reps = int(sys.argv[2])
tf.config.threading.set_intra_op_parallelism_threads(n)
tf.config.threading.set_inter_op_parallelism_threads(1)
rng = np.random.default_rng(0)
out = {}
for (k, m, nn) in [(2048, 384, 1536), (2048, 1536, 384), (2048, 384, 384), (2048, 384, 1), (2048, 96, 384)]:
    a = tf.constant(rng.standard_normal((k, m), dtype=np.float32))
    b = tf.constant(rng.standard_normal((k, nn), dtype=np.float32))
    f = tf.function(lambda a, b: tf.matmul(a, b, transpose_a=True))
    crcs = {zlib.crc32(f(a, b).numpy().tobytes()) for _ in range(reps)}
    out[(k, m, nn)] = sorted(crcs)
print(n, out)
