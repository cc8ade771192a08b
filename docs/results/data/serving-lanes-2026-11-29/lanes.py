"""The fine-tuned MiniLM encoder (packed, first position) at [1, 27] and [32, 52]: the served
pass (`encoder_sequence`) against a two-lane pass (heads and feed-forward units split in two
independent chains per block), under (intra, inter) threads."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
intra, inter = int(sys.argv[1]), int(sys.argv[2]); L = int(sys.argv[3]) if len(sys.argv) > 3 else 2
tf.config.threading.set_intra_op_parallelism_threads(intra)
tf.config.threading.set_inter_op_parallelism_threads(inter)
from electra_tf.serving import inference as inf
from electra_tf.tasks.model_folder import load_finetuned
model, info = load_finetuned("/tmp/serve/run")
enc = model.encoder
H, NH = enc.hidden_dim, enc.num_heads
qkv = [[tf.Variable(k), tf.Variable(b)] for k, b in inf.fused_qkv(enc)]
def lane_weights(layer, j):
    a = layer._self_attention_layer; h = H // L; f = enc.intermediate_dim // L
    cols = slice(j * h, (j + 1) * h)
    ks = [tf.reshape(p.kernel, [H, H])[:, cols] for p in (a._query_dense, a._key_dense, a._value_dense)]
    bs = [tf.reshape(p.bias, [H])[cols] for p in (a._query_dense, a._key_dense, a._value_dense)]
    wo = tf.reshape(a._output_dense.kernel, [H, H])[cols]
    i1, o2 = layer._feedforward_intermediate_dense, layer._feedforward_output_dense
    fc = slice(j * f, (j + 1) * f)
    if os.environ.get("SLICE"):
        return [tf.Variable(tf.concat(ks, 1)), tf.Variable(tf.concat(bs, 0)), (a._output_dense.kernel, j * h, h), tf.Variable(i1.kernel[:, fc]), tf.Variable(i1.bias[fc]), (o2.kernel, j * f, f)]
    return [tf.Variable(v) for v in (tf.concat(ks, 1), tf.concat(bs, 0), wo, i1.kernel[:, fc], i1.bias[fc], o2.kernel[fc])]
def rows_of(w):
    if isinstance(w, tuple):
        v, start, n = w
        return tf.slice(tf.reshape(v, [-1, H]), [start, 0], [n, H])
    return w
LW = [[lane_weights(layer, j) for j in range(L)] for layer in enc.transformer_layers]

def lanes(token_ids, padding_mask, segment_ids):
    shape = tf.shape(token_ids); batch, length = shape[0], shape[1]
    rows = inf.rows_kept(padding_mask)
    x = inf._embedded(enc.embeddings, token_ids, segment_ids, length, rows)
    bias = inf.kernels.mask_bias(padding_mask[:, None, None, :], x.dtype)
    last = len(enc.transformer_layers) - 1
    for i, (layer, lw) in enumerate(zip(enc.transformer_layers, LW)):
        first = i == last
        ctx = [inf._attention(tf.nn.bias_add(tf.matmul(x, k), b), bias, batch, length, NH // L, rows, first) for k, b, *_ in lw]
        if first:
            x = inf._first_rows(x, batch, length, rows)
        a = tf.add_n([tf.matmul(c, rows_of(w[2])) for c, w in zip(ctx, lw)]) + layer._self_attention_layer._output_dense.bias
        x = inf._layer_norm(a + x, layer._self_attention_layer_norm)
        f = tf.add_n([tf.matmul(inf._gelu(tf.nn.bias_add(tf.matmul(x, w[3]), w[4])), rows_of(w[5])) for w in lw])
        x = inf._layer_norm(f + layer._feedforward_output_dense.bias + x, layer._feedforward_layer_norm)
    return x

plain = tf.function(lambda t, m, s: inf.encoder_sequence(enc, t, m, s, qkv, packed=True, first_only=True))
lane = tf.function(lanes)
rng = np.random.default_rng(0)
def batch(b, s):
    n = rng.integers(s // 3, s + 1, b); n[0] = s
    m = (np.arange(s)[None] < n[:, None]).astype(np.int32)
    t = rng.integers(1000, 20000, (b, s)).astype(np.int32) * m
    return tf.constant(t), tf.constant(m), tf.constant(np.zeros_like(t))
res = {"intra": intra, "inter": inter, "lanes": L}
for b, s, n in ((1, 27, 300), (32, 52, 20)):
    x = batch(b, s)
    np.testing.assert_allclose(plain(*x).numpy(), lane(*x).numpy(), atol=2e-4)
    for name, f in (("plain", plain), ("lanes", lane)) * 2:
        for _ in range(10): f(*x)
        ts = []
        for _ in range(n):
            t = time.perf_counter(); f(*x).numpy(); ts.append(time.perf_counter() - t)
        res.setdefault(f"b{b}_{name}_ms", []).append(round(1000 * float(np.median(ts)), 2))
print(json.dumps(res), flush=True)
