"""One fine-tuning step at a fixed [32, L] after 2 warm-up steps, median of 10: python step.py L torch|ours [DATA].
ours: electra_tf as imported (PYTHONPATH picks the tree); torch: BertForSequenceClassification,
AdamW, clipping at 1.0, on the same all-MiniLM-L6-v2 weights. Random ids, every position real."""
import os, sys, time, collections, json, glob, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
L = int(sys.argv[1]); which = sys.argv[2]; DATA = sys.argv[3] if len(sys.argv) > 3 else "data"
import numpy as np
rng = np.random.default_rng(0)
ids = rng.integers(1000, 20000, size=(32, L)).astype("int32"); ids[:, 0] = 101
labels = rng.integers(0, 2, size=(32,)).astype("int32")
if which == "torch":
    import torch
    from transformers import BertForSequenceClassification
    from electra_tf.data.public import fetch_minilm
    torch.set_num_threads(2)
    enc = fetch_minilm(DATA + "/models")
    model = BertForSequenceClassification.from_pretrained(str(enc), num_labels=2); model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, eps=1e-6)
    x = torch.tensor(ids, dtype=torch.long); y = torch.tensor(labels, dtype=torch.long); m = torch.ones_like(x)
    times = []
    for i in range(12):
        t = time.perf_counter()
        loss = model(input_ids=x, attention_mask=m, labels=y).loss; loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); opt.zero_grad()
        times.append(time.perf_counter() - t)
    print(json.dumps({"impl": "torch", "L": L, "median_ms": round(1000 * float(np.median(times[2:])), 1)}))
    sys.exit()
import tensorflow as tf
from electra_tf.bench.finetune import FinetuneBenchOptions, _train_electra_tf, workload
from electra_tf.bench.profile import op_times
options = FinetuneBenchOptions(data_dir=DATA, round=1, epochs=1, train_examples=32, dev_examples=32)
encoder, splits, labels_, _ = workload(options)
import keras
import electra_tf.finetuning.run as r
class Stop(Exception): pass
def fit(model, config, seed, initial_epoch=0, callbacks=()):
    model.prepare_fit(1, 1) if hasattr(model, "prepare_fit") else None
    data = ({"token_ids": tf.constant(ids), "padding_mask": tf.ones_like(tf.constant(ids)), "segment_ids": tf.zeros_like(tf.constant(ids))}, tf.constant(labels))
    model.build_compiled_state(tf.data.Dataset.from_tensors(data))
    cf = tf.function(model.train_step).get_concrete_function(data)
    times = []
    for i in range(12):
        t = time.perf_counter(); out = cf(data); float(out["loss"]) if isinstance(out, dict) else None; times.append(time.perf_counter() - t)
    rec = {"impl": "electra_tf", "L": L, "median_ms": round(1000 * float(np.median(times[2:])), 1)}
    if which == "prof":
        with tempfile.TemporaryDirectory() as logdir:
            tf.profiler.experimental.start(logdir, options=tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=0, device_tracer_level=1))
            for _ in range(5): cf(data)
            tf.profiler.experimental.stop()
            tot = op_times(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)[0])
        k = sum(tot.values())
        rec["kernel_ms"] = round(1000 * k / 5, 1)
        rec["ops"] = [(n, round(1000 * s / 5, 1)) for n, s in sorted(tot.items(), key=lambda x: -x[1])[:25]]
    print(json.dumps(rec)); raise Stop
mk = r.make_job
def make_job(*a, **k):
    job = mk(*a, **k); job.fit = fit; return job
r.make_job = make_job
try: _train_electra_tf(options, encoder, splits, labels_)
except Stop: pass
