"""The joint head's [W, K, L, D] @ [D, N] product against NumPy's, K >= 2 (144 shapes);
prints each wrong case and the count. Usage: python joint_head_numerics.py > joint_head_numerics.log"""
import os, sys, itertools
os.environ['TF_ENABLE_ONEDNN_OPTS'] = '1'; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
import numpy as np, tensorflow as tf
rng = np.random.default_rng(0)
bad = 0
for W, K, L, D, N in itertools.product([1, 2, 3, 5], [2, 3, 6], [7, 16, 24], [8, 16], [1, 16]):
    a = rng.standard_normal((W, K, L, D)).astype(np.float32); b = rng.standard_normal((D, N)).astype(np.float32)
    got = tf.matmul(a, b).numpy(); want = a @ b
    err = np.abs(got - want).max()
    if err > 1e-4:
        bad += 1; print("WRONG", (W, K, L, D, N), err, flush=True)
print("wrong cases:", bad)
