"""serving_default of a SavedModel (argv[1]) at batch 1 by real tokens and at batch 8 / 32
of review texts; 1 intra-op x 2 inter-op threads; medians."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
WORK = os.environ.get("WORK", "/tmp/bfx")
import tensorflow_text  # noqa
tf.config.threading.set_intra_op_parallelism_threads(1); tf.config.threading.set_inter_op_parallelism_threads(2)
form = sys.argv[1]
sig = tf.saved_model.load(f"{WORK}/{form}/m/1").signatures["serving_default"]
texts = json.load(open(os.environ.get("TEXTS", "/tmp/serve/work-lanes/texts.json")))
words = " ".join(texts).split()
res = {"form": form}
for n in (6, 14, 30, 62, 126):  # + [CLS] [SEP]: about n + 2 tokens (one word may be pieces)
    t = tf.constant([" ".join(words[:n])])
    for _ in range(20): sig(text=t)
    ts = []
    for _ in range(200):
        s = time.perf_counter(); sig(text=t)["label"].numpy(); ts.append(time.perf_counter() - s)
    res[f"b1_w{n}"] = round(1000 * float(np.median(ts)), 3)
rev = texts[:256]
ts = []
for _ in range(3): sig(text=tf.constant(rev[:1]))
for t in rev[:200]:
    s = time.perf_counter(); sig(text=tf.constant([t]))["label"].numpy(); ts.append(time.perf_counter() - s)
res["b1_reviews_p50"] = round(1000 * float(np.median(ts)), 3)
for b in (8, 32):
    chunks = [tf.constant(rev[i:i + b]) for i in range(0, 256, b)]
    for c in chunks[:2]: sig(text=c)
    s = time.perf_counter()
    for c in chunks: sig(text=c)["label"].numpy()
    res[f"b{b}_texts_s"] = round(256 / (time.perf_counter() - s), 1)
print(json.dumps(res), flush=True)
