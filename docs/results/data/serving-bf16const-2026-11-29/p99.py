"""p50 and p99 (ms) of 200 single review texts through `serving_default`, three passes over
the same texts in one process after 5 warm-up calls: `python p99.py SAVED_MODEL_FOLDER`
(the `m/1` version inside it) -> one JSON line (p99.jsonl)."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
import tensorflow_text  # noqa
tf.config.threading.set_intra_op_parallelism_threads(1); tf.config.threading.set_inter_op_parallelism_threads(2)
sig = tf.saved_model.load(f"{sys.argv[1]}/m/1").signatures["serving_default"]
texts = json.load(open("/tmp/serve/work-lanes/texts.json"))[:200]
for t in texts[:5]: sig(text=tf.constant([t]))
out = {"form": sys.argv[1]}
for p in range(3):
    ts = []
    for t in texts:
        s = time.perf_counter(); sig(text=tf.constant([t]))["label"].numpy(); ts.append(time.perf_counter() - s)
    out[f"pass{p}"] = [round(1000 * float(np.percentile(ts, q)), 2) for q in (50, 99)]
print(json.dumps(out))
