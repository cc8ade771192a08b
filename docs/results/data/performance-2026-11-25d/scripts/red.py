import time, statistics
import tensorflow as tf
exec(open('docs/results/data/performance-2026-11-25d/scripts/mm2.py').read().split("# A:")[0])
for n in (256, 1024, 64):
    dys = [R([4096, n]) for _ in range(6)]
    fl = lambda g: (lambda: tf.add_n(g()))
    ones = tf.ones([1, 4096])
    f = {
      "sum": tf.function(lambda: [tf.reduce_sum(d, 0) for d in dys]),
      "biasaddgrad": tf.function(lambda: [tf.raw_ops.BiasAddGrad(out_backprop=d) for d in dys]),
      "ones@dy": tf.function(lambda: [tf.reshape(mm(ones, d), [n]) for d in dys]),
      "dy^T@ones": tf.function(lambda: [tf.reshape(mm(d, ones, transpose_a=True, transpose_b=True), [n]) for d in dys]),
    }
    ref = tf.reduce_sum(dys[0], 0)
    for k, g in f.items():
        print(k, float(tf.reduce_max(tf.abs(g()[0] - ref))))
    run(f"reduce rows of [4096,{n}] x6", {k: fl(g) for k, g in f.items()})
