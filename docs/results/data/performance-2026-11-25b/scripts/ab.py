import sys, time, math, numpy as np, tensorflow as tf
from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.serving import inference as inf
B=int(sys.argv[1]); R=int(sys.argv[2]) if len(sys.argv)>2 else 300
config = load_recipe("small").override("data.sequence_length=128","data.pad_id=0","data.unk_id=1","data.cls_id=2","data.sep_id=3","data.mask_id=4")
model = ElectraPretrainer(config)
disc = model.discriminator
ids = np.random.default_rng(0).integers(5, 1000, size=(B, 128)).astype(np.int32)
t = (tf.constant(ids), tf.ones_like(ids), tf.zeros_like(ids))
disc({"token_ids": t[0], "padding_mask": t[1], "segment_ids": t[2]})
enc = disc.encoder
qkv = [(tf.Variable(k), tf.Variable(b)) for k, b in inf.fused_qkv(enc)]
wt = [tf.Variable(k) for k in inf.transposed_wide_kernels(enc)]
_LN = inf._LARGE_NEGATIVE
def t32(x, perm):
    return tf.bitcast(tf.transpose(tf.bitcast(x, tf.int32), perm), tf.float32)
def variant(int_tr=False, manual_sm=False):
    tr = t32 if int_tr else tf.transpose
    def f(token_ids, padding_mask, segment_ids):
        embeddings = enc.embeddings
        shape = tf.shape(token_ids); batch, length = shape[0], shape[1]
        x = (tf.gather(embeddings.token_embedding.embeddings, token_ids) + tf.gather(embeddings.segment_embedding.embeddings, segment_ids) + embeddings.position_embedding.embeddings[:length])
        x = inf._layer_norm(tf.reshape(x, [-1, embeddings.embedding_dim]), embeddings.layer_norm)
        if enc.embeddings_project is not None: x = inf._dense(x, enc.embeddings_project)
        hidden, heads = enc.hidden_dim, enc.num_heads; head_dim = hidden // heads
        keep = tf.cast(padding_mask, x.dtype)[:, None, None, :]
        bias = (1.0 - keep) * _LN
        for layer, (kernel, qkv_bias), wk in zip(enc.transformer_layers, qkv, wt):
            attention = layer._self_attention_layer
            q3 = tf.nn.bias_add(tf.matmul(x, kernel), qkv_bias)
            q3 = tr(tf.reshape(q3, [batch, length, 3, heads, head_dim]), [2, 0, 3, 1, 4])
            query, key, value = tf.unstack(q3)
            scores = tf.matmul(query * (1.0 / math.sqrt(head_dim)), key, transpose_b=True) + bias
            if manual_sm:
                e = tf.exp(scores - tf.reduce_max(scores, -1, keepdims=True))
                probabilities = e / tf.reduce_sum(e, -1, keepdims=True) * keep
            else:
                probabilities = tf.nn.softmax(scores) * keep
            context = tr(tf.matmul(probabilities, value), [0, 2, 1, 3])
            context = tf.reshape(context, [-1, hidden])
            x = inf._layer_norm(inf._dense(context, attention._output_dense) + x, layer._self_attention_layer_norm)
            it = layer._feedforward_intermediate_dense
            inner = inf._gelu(tf.nn.bias_add(tf.matmul(x, wk, transpose_b=True), it.bias))
            x = inf._layer_norm(inf._dense(inner, layer._feedforward_output_dense) + x, layer._feedforward_layer_norm)
        return x
    return tf.function(f)
fs = {"cur": variant(), "int32_tr": variant(int_tr=True)}
ref = fs["cur"](*t).numpy()
for n, f in fs.items(): print(n, float(np.abs(f(*t).numpy() - ref).max()))
for f in fs.values():
    for _ in range(10): f(*t).numpy()
ts = {n: [] for n in fs}
names = list(fs)
for i in range(R):
    order = names if i % 2 == 0 else names[::-1]
    for n in order:
        t0 = time.perf_counter(); fs[n](*t).numpy(); ts[n].append(time.perf_counter() - t0)
base = np.array(ts["cur"])
for n in fs:
    r = base / np.array(ts[n])
    print(f"{n:10s} p50 {np.median(ts[n])*1e3:.2f} ms  paired cur/this {np.median(r):.3f} [q25 {np.percentile(r,25):.3f} q75 {np.percentile(r,75):.3f}]")
