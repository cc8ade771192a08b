# steady_batches.jsonl: `python steady_batches.py NAME` for plain, xla (packed pass under XLA, an
# earlier variant), xla_padded (what export --xla writes); 6 batches of 32 texts, 3 passes, ms per batch.
import sys, json, time, os
import numpy as np, tensorflow as tf, tensorflow_text
tf.config.threading.set_intra_op_parallelism_threads(2); tf.config.threading.set_inter_op_parallelism_threads(1)
name = sys.argv[1]
texts = json.load(open("/tmp/x/texts.json"))
f = tf.saved_model.load(f"/tmp/x/exp/{name}/1").signatures["serving_default"]
batches = [tf.constant(texts[i*32:(i+1)*32]) for i in range(6)]
out = {"impl": name}
for p in range(3):
    ts = []
    for t in batches:
        b = time.perf_counter(); f(text=t)["label"].numpy(); ts.append(time.perf_counter() - b)
    out[f"pass{p}_ms"] = [round(1000*x) for x in ts]
print(json.dumps(out))
