"""Largest difference between two TF checkpoints' variables, and how many differ."""
import sys, json
import numpy as np, tensorflow as tf
a, b = (tf.train.load_checkpoint(p) for p in sys.argv[1:3])
names = sorted(n for n in a.get_variable_to_shape_map() if "OPTIMIZER_SLOT" not in n and "_CHECKPOINTABLE" not in n)
worst, differ = 0.0, []
for n in names:
    x, y = a.get_tensor(n), b.get_tensor(n)
    if x.dtype.kind in "fc":
        d = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) if x.size else 0.0
    else:
        d = float(not np.array_equal(x, y))
    if d > 0:
        differ.append((n, d))
    worst = max(worst, d)
print(json.dumps({"variables": len(names), "differ": len(differ), "max_abs": worst, "first": differ[:5]}))
