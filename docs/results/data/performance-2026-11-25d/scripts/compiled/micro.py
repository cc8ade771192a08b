import sys; sys.path.insert(0, "/tmp/s28/op")
import tensorflow as tf
from gelu_py import gelu_op
from electra_tf.layers import kernels
exec(open('docs/results/data/performance-2026-11-25d/scripts/mm2.py').read().split("# A:")[0])
for shape in ([4096, 1024], [4096, 256], [7, 3]):
    x = R(shape) * 3; up = R(shape)
    def fb(f):
        def g():
            with tf.GradientTape() as tape:
                tape.watch(x); y = f(x)
            return y, tape.gradient(y, x, output_gradients=up)
        return tf.function(g)
    a, b = fb(kernels.gelu), fb(gelu_op)
    (ya, ga), (yb, gb) = a(), b()
    print(shape, "y maxdiff", float(tf.reduce_max(tf.abs(ya - yb))), "grad maxdiff", float(tf.reduce_max(tf.abs(ga - gb))))
    if shape[0] > 100:
        run(f"gelu fwd+bwd {shape}: current | one-pass op", {"cur": lambda: a()[1], "op": lambda: b()[1]})
