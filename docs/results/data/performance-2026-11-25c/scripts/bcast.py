import time, numpy as np, tensorflow as tf
x = tf.random.normal([32, 4, 128, 128]); y = tf.random.normal([32, 4, 128, 128])
keep = tf.random.uniform([32, 4, 128, 128]) > 0.1
keepf = tf.cast(keep, tf.float32)
row = tf.random.normal([32, 4, 128, 1]); col = tf.random.normal([32, 1, 1, 128])
z = tf.zeros([32, 4, 128, 128])
fs = {
 "mul_same": lambda: x * y,
 "mul_scalar": lambda: x * 1.1,
 "select_scalar0": lambda: tf.where(keep, x, tf.zeros([])),
 "select_full0": lambda: tf.where(keep, x, z),
 "mul_keepf": lambda: x * keepf,
 "sub_row": lambda: x - row,
 "mul_row": lambda: x * row,
 "add_col": lambda: x + col,
 "sum_last": lambda: tf.reduce_sum(x, -1, keepdims=True),
 "softmax": lambda: tf.nn.softmax(x),
}
fs = {k: tf.function(f) for k, f in fs.items()}
for f in fs.values(): f()
t = {k: [] for k in fs}
for i in range(40):
    for k, f in fs.items():
        t0 = time.perf_counter(); f().numpy() if False else f(); t[k].append(time.perf_counter() - t0)
for k in t: print(f"{k:16s} {1e3*np.median(t[k]):.2f} ms")
