"""The exported classifier's serving_default, batch 1 and 32, under (intra, inter) threads."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf, tensorflow_text  # noqa
intra, inter = int(sys.argv[1]), int(sys.argv[2]); path = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("WORK", "/tmp/serve/work") + "/saved_model/m/1"
tf.config.threading.set_intra_op_parallelism_threads(intra)
tf.config.threading.set_inter_op_parallelism_threads(inter)
texts = json.load(open(os.environ.get("WORK", "/tmp/serve/work") + "/texts.json"))
fn = tf.saved_model.load(path).signatures["serving_default"]
key = list(fn.structured_input_signature[1])[0]
def call(b):
    return fn(**{key: tf.constant(b)})
res = {}
for b, n in ((1, 200), (32, 10)):
    batches = [texts[(i * b) % len(texts):][:b] for i in range(n)]
    for x in batches[:5]: call(x)
    for x in batches: call(x)
    ts = []
    for x in batches:
        t = time.perf_counter(); out = call(x); [v.numpy() for v in out.values()]; ts.append(time.perf_counter() - t)
    res[b] = round(1000 * float(np.median(ts)), 2) if b == 1 else round(32 / float(np.median(ts)), 1)
print(json.dumps({"intra": intra, "inter": inter, "b1_ms": res[1], "b32_texts_s": res[32], "path": path}))
