"""Op count, trace seconds and batch-1 call time of a tokenizing function (one process,
alternating): tf_text.BertTokenizer.tokenize against the basic split built with unvalidated row splits, then the same WordPiece."""
import json, sys, time
import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.python.ops import bert_tokenizer as bt
from tensorflow_text.python.ops.regex_split_ops import gen_regex_split_ops

vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [w for w in "the a great ##est movie was not , . ! good bad ##s ##ing fun".split()]
table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant(vocab), tf.range(len(vocab), dtype=tf.int64)), 1)
bert = tf_text.BertTokenizer(table, token_out_type=tf.int64, unknown_token="[UNK]", lower_case=False)
wp = tf_text.WordpieceTokenizer(table, token_out_type=tf.int64, unknown_token="[UNK]")
DELIM = "(" + bt._DELIM_REGEX_PATTERN + ")"
KEEP = "(" + bt._KEEP_DELIM_NO_WHITESPACE_PATTERN + ")"

def lean(texts):
    texts = tf.strings.regex_replace(texts, r"\p{Cc}|\p{Cf}", " ")
    words, _, _, splits = gen_regex_split_ops.regex_split_with_offsets(tf.reshape(texts, [-1]), DELIM, KEEP)
    return wp.tokenize(tf.RaggedTensor.from_row_splits(words, splits, validate=False))

def old(texts):
    return bert.tokenize(texts)

spec = tf.TensorSpec([None], tf.string)
texts = tf.constant(["the greatest movie, was not fun!!", "bad\u0007movies \u00e9t\u00e9 great", "", "good"])
out = {}
for name, f in [(n, f) for _ in range(3) for n, f in (("lean", lean), ("bert", old))]:
    fn = tf.function(lambda t, f=f: f(t).merge_dims(-2, -1).to_tensor())
    t0 = time.perf_counter(); c = fn.get_concrete_function(spec); trace = time.perf_counter() - t0
    ops = len(c.graph.get_operations())
    types = {}
    for op in c.graph.get_operations(): types[op.type] = types.get(op.type, 0) + 1
    one = texts[:1]
    for _ in range(50): fn(one)
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(200): fn(one)
        ts.append((time.perf_counter() - t0) / 200 * 1e3)
    out.setdefault(name, {"trace": [], "ms": []})["trace"].append(trace); out[name]["ms"].append(float(np.median(ts))); out[name].update({"ops": ops, "trace_s": trace, "ms_batch1": float(np.median(ts)), "ms_all": ts, "types": types, "result": fn(texts).numpy().tolist()})
print(json.dumps({k: {kk: v[kk] for kk in ("ops", "trace", "ms")} for k, v in out.items()}))
assert out["bert"]["result"] == out["lean"]["result"]
print("bert op types", sorted(out["bert"]["types"].items(), key=lambda x: -x[1])[:15])
print("lean op types", sorted(out["lean"]["types"].items(), key=lambda x: -x[1])[:15])
