import os, sys, time, json, keras, numpy as np
from electra_tf.bench.finetune import FinetuneBenchOptions, workload
from electra_tf import ElectraTextClassifier
encoder, splits, labels, _ = workload(FinetuneBenchOptions(data_dir="/tmp/democlone/data"))
B, S = int(sys.argv[1]), int(sys.argv[2])
keras.utils.set_random_seed(0)
m = ElectraTextClassifier.from_source(str(encoder), labels=labels, sequence_length=S, pad_to="max", dropout=float(os.environ.get("DROPOUT", "0.1")))
texts = [t for t, _ in splits["train"]][:B]; y = np.array([l for _, l in splits["train"]][:B])
x = {k: np.asarray(keras.ops.convert_to_numpy(v)).astype("int32") for k, v in m.preprocessor(texts).items()}
m.prepare_fit(100, 1)
run = lambda: m.train_on_batch(x, y)
for _ in range(3): run()
ts = []
for _ in range(int(os.environ.get("N", "10"))):
    t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
print(json.dumps({"backend": keras.config.backend(), "flags": os.environ.get("XLA_FLAGS", ""), "dropout": os.environ.get("DROPOUT", "0.1"), "shape": [B, S], "step_ms": round(1e3 * float(np.median(ts)), 1), "min": round(1e3*min(ts),1)}))
