"""Probe: ElectraTextClassifier (task class) fit on 700 movie-review snippets, 1 epoch, batch 32,
length 128, from all-MiniLM-L6-v2, on whatever KERAS_BACKEND says; prints fit seconds per epoch."""
import json, sys, time
import keras, numpy as np
from electra_tf.bench.finetune import FinetuneBenchOptions, workload
from electra_tf import ElectraTextClassifier
opts = FinetuneBenchOptions(data_dir=__import__("os").environ.get("PROBE_DATA", "/tmp/intel/data"))
encoder, splits, labels, _ = workload(opts)
texts = [t for t, _ in splits["train"]]; y = [labels[l] for _, l in splits["train"]]
keras.utils.set_random_seed(0)
t0 = time.time()
m = ElectraTextClassifier.from_source(str(encoder), labels=labels, sequence_length=128, pad_to=sys.argv[2] if len(sys.argv) > 2 else "longest")
load = time.time() - t0
times = []
for epoch in range(int(sys.argv[1])):
    t = time.time(); m.fit(texts, y, epochs=1, batch_size=32, seed=epoch, verbose=0); times.append(time.time() - t)
dev = [t for t, _ in splits["dev"]]
t = time.time(); p = m.predict(dev); pred_s = time.time() - t
acc = float(np.mean(np.argmax(p, -1) == np.array([l for _, l in splits["dev"]])))
print(json.dumps({"backend": keras.config.backend(), "load_s": round(load, 1), "epoch_s": [round(x, 1) for x in times], "predict_300_s": round(pred_s, 1), "dev_acc": acc}))
