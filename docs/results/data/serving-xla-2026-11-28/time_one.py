"""One served form, in this process: `python time_one.py NAME ROUND` prints one JSON line.

Loads /tmp/x/exp/NAME/1 (written by build.py), 2 intra-op threads, 1 inter-op. Warm-up: every
timed single text and batch once (XLA compiles each new [batch, length] there; its time is
`warmup_s`). Then CALLS single-text calls (median, p90) and BATCHES batches of 32 texts
(texts/s), tokenization and label names included (the `serving_default` signature).
"""
import json, os, sys, time
import numpy as np, tensorflow as tf, tensorflow_text  # noqa: F401
tf.config.threading.set_intra_op_parallelism_threads(2)
tf.config.threading.set_inter_op_parallelism_threads(1)
name, rnd = sys.argv[1], int(sys.argv[2])
calls, batches = int(os.environ.get("CALLS", 60)), int(os.environ.get("BATCHES", 6))
texts = json.load(open("/tmp/x/texts.json"))
f = tf.saved_model.load(f"/tmp/x/exp/{name}/1").signatures["serving_default"]
singles = [tf.constant(texts[(i + rnd * calls) % 400:][:1]) for i in range(calls)]
groups = [tf.constant(texts[i * 32:(i + 1) * 32]) for i in range(batches)]
begin = time.perf_counter()
for t in singles + groups:
    f(text=t)["label"].numpy()
warmup = time.perf_counter() - begin
single = []
for t in singles:
    b = time.perf_counter(); f(text=t)["label"].numpy(); single.append(time.perf_counter() - b)
spent = []
for t in groups:
    b = time.perf_counter(); f(text=t)["label"].numpy(); spent.append(time.perf_counter() - b)
ms = np.asarray(single) * 1000
print(json.dumps({"impl": name, "round": rnd, "warmup_s": round(warmup, 1),
                  "batch1_p50_ms": round(float(np.median(ms)), 2),
                  "batch1_p90_ms": round(float(np.percentile(ms, 90)), 2),
                  "batch32_texts_per_s": round(32 * len(spent) / sum(spent), 2),
                  "calls": calls, "batches": batches}))
