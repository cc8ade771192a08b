import os, sys, time, json, gzip, glob, collections, keras, numpy as np, jax
from electra_tf.bench.finetune import FinetuneBenchOptions, workload
from electra_tf import ElectraTextClassifier
encoder, splits, labels, _ = workload(FinetuneBenchOptions(data_dir="/tmp/democlone/data"))
B, S = 32, 64
keras.utils.set_random_seed(0)
m = ElectraTextClassifier.from_source(str(encoder), labels=labels, sequence_length=S, pad_to="max")
texts = [t for t, _ in splits["train"]][:B]; y = np.array([l for _, l in splits["train"]][:B])
x = {k: np.asarray(keras.ops.convert_to_numpy(v)).astype("int32") for k, v in m.preprocessor(texts).items()}
m.prepare_fit(100, 1)
for _ in range(3): m.train_on_batch(x, y)
import shutil; shutil.rmtree("/tmp/jaxft/trace", ignore_errors=True); jax.profiler.start_trace("/tmp/jaxft/trace", create_perfetto_trace=True)
for _ in range(3): m.train_on_batch(x, y)
jax.profiler.stop_trace()
f = sorted(glob.glob("/tmp/jaxft/trace/**/*perfetto_trace.json.gz", recursive=True))[-1]
ev = json.load(gzip.open(f))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
import re, time as _t
tot = collections.Counter(); cnt = collections.Counter(); th = collections.Counter()
for e in ev:
    if e.get("ph") == "X" and not e["name"].startswith(("ThunkExecutor", "$", "SlinkyThreadPool")):
        k = re.sub(r"[.\d]+$", "", e["name"]); tot[k] += e.get("dur", 0); cnt[k] += 1; th[e.get("tid")] += e.get("dur", 0)
t0 = _t.perf_counter(); [m.train_on_batch(x, y) for _ in range(3)]; wall = (_t.perf_counter() - t0) / 3
print("FLAGS", os.environ.get("XLA_FLAGS"), "step ms", round(wall * 1e3), "op ms", round(sum(tot.values()) / 3e3), "per thread", sorted(round(v / 3e3) for v in th.values())[-3:])
for n, d in tot.most_common(6): print("  ", round(d / 3e3, 1), cnt[n] // 3, n)
