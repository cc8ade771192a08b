import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
kind, a, b = sys.argv[1], eval(sys.argv[2]), eval(sys.argv[3])
eq = sys.argv[4] if len(sys.argv) > 4 else None
for _ in range(300):
    x, y = tf.random.normal(a), tf.random.normal(b)
    tf.einsum(eq, x, y) if kind == "einsum" else tf.matmul(x, y)
import ctypes; ctypes.CDLL("libc.so.6").malloc_trim(0)
