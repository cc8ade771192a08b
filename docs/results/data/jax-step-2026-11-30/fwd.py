import os, sys, time, json, keras, numpy as np
from electra_tf.bench.finetune import FinetuneBenchOptions, workload
from electra_tf import ElectraTextClassifier
from electra_tf.tasks.base import inference_function
encoder, splits, labels, _ = workload(FinetuneBenchOptions(data_dir="/tmp/democlone/data"))
B, S = int(sys.argv[1]), int(sys.argv[2])
m = ElectraTextClassifier.from_source(str(encoder), labels=labels, sequence_length=S, pad_to="max")
texts = [t for t, _ in splits["train"]][:B]
x = {k: np.asarray(keras.ops.convert_to_numpy(v)) for k, v in m.preprocessor(texts).items()}
f = inference_function(m)
run = (lambda: np.asarray(f(x))) if keras.config.backend() != "tensorflow" else (lambda: f({k: v.astype("int32") for k, v in x.items()}).numpy())
for _ in range(3): run()
ts = []
for _ in range(15):
    t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
print(json.dumps({"backend": keras.config.backend(), "flags": os.environ.get("XLA_FLAGS", ""), "shape": [B, S], "fwd_ms": round(1e3 * float(np.median(ts)), 1)}))
