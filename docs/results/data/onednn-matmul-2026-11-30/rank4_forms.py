"""Non-broadcast rank-4 batched matmuls (attention's forms), 30 products each, in one
process; prints each case, then ALL OK if none crashed. Usage: python rank4_forms.py > rank4_forms.log"""
import os, sys, itertools
os.environ['TF_ENABLE_ONEDNN_OPTS'] = '1'; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
import tensorflow as tf
start = int(sys.argv[1]) if len(sys.argv) > 1 else 0
cases = []
for B, H, M, K, N, ta, tb in itertools.product([1, 2, 8], [1, 2], [1, 16, 17], [8, 16], [1, 8, 16, 24], [False, True], [False, True]):
    a = [B, H, K, M] if ta else [B, H, M, K]
    b = [B, H, N, K] if tb else [B, H, K, N]
    cases.append((a, b, ta, tb))
for i, (a, b, ta, tb) in enumerate(cases[start:], start):
    print(i, a, b, ta, tb, flush=True)
    for _ in range(30):
        tf.matmul(tf.random.normal(a), tf.random.normal(b), transpose_a=ta, transpose_b=tb)
print("ALL OK", len(cases))
