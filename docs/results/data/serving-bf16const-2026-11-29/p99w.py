"""As p99.py, after one single text of each length (1 to 126 copies of "the") called first
(the warm-up's seconds recorded): `python p99w.py SAVED_MODEL_FOLDER` -> one JSON line."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
import tensorflow_text  # noqa
tf.config.threading.set_intra_op_parallelism_threads(1); tf.config.threading.set_inter_op_parallelism_threads(2)
sig = tf.saved_model.load(f"{sys.argv[1]}/m/1").signatures["serving_default"]
texts = json.load(open("/tmp/serve/work-lanes/texts.json"))[:200]
import time as _t; _s = _t.perf_counter()
for k in range(1, 127): sig(text=tf.constant([" ".join(["the"] * k)]))
out0 = round(_t.perf_counter() - _s, 2)
out = {"form": sys.argv[1], "warmup_s": out0}
for p in range(3):
    ts = []
    for t in texts:
        s = time.perf_counter(); sig(text=tf.constant([t]))["label"].numpy(); ts.append(time.perf_counter() - s)
    out[f"pass{p}"] = [round(1000 * float(np.percentile(ts, q)), 2) for q in (50, 99)]
print(json.dumps(out))
