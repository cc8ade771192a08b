import sys; sys.path.insert(0, "/tmp/s28/op")
import tensorflow as tf
from gelu_py import dropout_op
from electra_tf.layers import kernels
exec(open('docs/results/data/performance-2026-11-25d/scripts/mm2.py').read().split("# A:")[0])
seed = tf.constant([3, 7], tf.int32)
for shape in ([32, 4, 128, 128], [4096, 256]):
    x = R(shape) + 5.0; up = R(shape)
    def fb(f):
        def g():
            with tf.GradientTape() as tape:
                tape.watch(x); y = f(x, 0.1, seed)
            return y, tape.gradient(y, x, output_gradients=up)
        return tf.function(g)
    a, b = fb(kernels.dropout), fb(dropout_op)
    yb, gb = b()
    kept = tf.cast(yb != 0, tf.float32)
    print(shape, "dropped", 1 - float(tf.reduce_mean(kept)), "scaled ok", float(tf.reduce_max(tf.abs(yb - kept * x / 0.9))), "grad mask = fwd mask", bool(tf.reduce_all((gb != 0) == (yb != 0))))
    run(f"dropout fwd+bwd {shape}: current | hash op", {"cur": lambda: a()[1], "op": lambda: b()[1]})
