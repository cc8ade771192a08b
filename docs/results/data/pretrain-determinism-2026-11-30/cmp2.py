import sys, json
import numpy as np, tensorflow as tf
a, b = (tf.train.load_checkpoint(p) for p in sys.argv[1:3])
m = a.get_variable_to_shape_map()
out = []
for n in sorted(m):
    if "_CHECKPOINTABLE" in n: continue
    x, y = a.get_tensor(n), b.get_tensor(n)
    if x.dtype.kind == "f" and x.size and not np.array_equal(x, y):
        out.append((n, m[n], float(np.max(np.abs(x - y)))))
print(len(out))
for o in out[:40]: print(o)
