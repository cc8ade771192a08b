"""Attention's scaled, masked product in a tf.function (grappler may fuse it), 72 forms,
30 calls each; prints each case, then ALL OK. Usage: python attention_forms.py > attention_forms.log"""
import os, sys, itertools
os.environ['TF_ENABLE_ONEDNN_OPTS'] = '1'; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
import tensorflow as tf
@tf.function
def attn(q, k, v, bias):
    s = tf.matmul(q * 0.35, k, transpose_b=True) + bias
    return tf.matmul(tf.nn.softmax(s), v)
start = int(sys.argv[1]) if len(sys.argv) > 1 else 0
cases = list(itertools.product([1, 2, 5], [1, 2], [1, 7, 16], [8], ["b11s", "b1ss", "bhss", "11ss"]))
for i, (B, H, S, D, form) in enumerate(cases[start:], start):
    print(i, B, H, S, D, form, flush=True)
    shape = {"b11s": [B, 1, 1, S], "b1ss": [B, 1, S, S], "bhss": [B, H, S, S], "11ss": [1, 1, S, S]}[form]
    for _ in range(30):
        q, k, v = (tf.random.normal([B, H, S, D]) for _ in range(3))
        attn(q, k, v, tf.random.normal(shape))
print("ALL OK", len(cases))
