import time, statistics, itertools
import tensorflow as tf
def alt(fs, n=40):
    for f in fs.values():
        for _ in range(3): f()
    ts = {k: [] for k in fs}
    for _ in range(n):
        for k, f in fs.items():
            s = time.perf_counter(); f(); ts[k].append(time.perf_counter() - s)
    base = list(fs)[0]
    return {k: (round(statistics.median(v) * 1e3, 3), round(statistics.median([a / b for a, b in zip(ts[base], v)]), 3)) for k, v in ts.items()}
def T(x):
    s = tf.shape(x); return tf.reshape(tf.transpose(x[tf.newaxis], [0, 2, 1]), [s[1], s[0]])
R = tf.random.normal
mm = tf.linalg.matmul
def run(name, fs):
    print(name, alt({k: (lambda f=f: f().numpy()) for k, f in fs.items()}), flush=True)
# A: 256x256 projection forward, 4 per layer x 12
x = R([4096, 256]); W = R([256, 256]); WT = tf.transpose(W)
fa = tf.function(lambda: tf.add_n([mm(x + float(i), W) for i in range(4)]))
fb = tf.function(lambda: tf.add_n([mm(x + float(i), WT, transpose_b=True) for i in range(4)]))
run("A disc proj fwd x4: plain | W^T stored, transpose_b", {"plain": fa, "tb": fb})
# B: generator q,k,v 64x64 separately vs one 64x192
g = R([4096, 64]); Wq, Wk, Wv = R([64, 64]), R([64, 64]), R([64, 64]); Wqkv = tf.concat([Wq, Wk, Wv], 1)
dq = R([4096, 64]); dqkv = R([4096, 192])
fsep = tf.function(lambda: tf.add_n([mm(g, Wq), mm(g, Wk), mm(g, Wv)]))
ffus = tf.function(lambda: mm(g, Wqkv))
run("B gen qkv fwd: 3 separate | fused 64x192", {"sep": fsep, "fused": ffus})
bsep = tf.function(lambda: tf.add_n([mm(dq + float(i), w, transpose_b=True) for i, w in enumerate([Wq, Wk, Wv])]) + tf.reduce_sum(tf.stack([mm(g, dq + float(i), transpose_a=True) for i in range(3)])))
bfus = tf.function(lambda: mm(dqkv, Wqkv, transpose_b=True) + tf.reduce_sum(mm(g, dqkv, transpose_a=True)))
run("B gen qkv bwd: 3 separate | fused", {"sep": bsep, "fused": bfus})
# C: generator logits against the embedding table
h = R([608, 128]); E = R([30522, 128]); gl = R([608, 30522])
c1 = tf.function(lambda: mm(h, T(E)))
c2 = tf.function(lambda: mm(h, E, transpose_b=True))
run("C logits: E^T written | transpose_b", {"ET": c1, "tb": c2})
d1 = tf.function(lambda: T(mm(h, gl, transpose_a=True)))
d2 = tf.function(lambda: mm(gl, h, transpose_a=True))
run("D dE: (h^T g)^T | g^T h", {"hTg_T": d1, "gTh": d2})
# E: discriminator head 256 -> 1
y = R([4096, 256]); w1 = R([256, 1])
e1 = tf.function(lambda: tf.add_n([mm(y + float(i), w1) for i in range(4)]))
e2 = tf.function(lambda: tf.add_n([tf.reduce_sum((y + float(i)) * tf.reshape(w1, [256]), -1, keepdims=True) for i in range(4)]))
run("E head 256->1 x4: matmul | mul+sum", {"mm": e1, "ms": e2})
