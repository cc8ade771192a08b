"""One fit call of N epochs (per-epoch wall times by a callback), then predict twice."""
import json, os, sys, time
import keras, numpy as np
from electra_tf.bench.finetune import FinetuneBenchOptions, workload
from electra_tf import ElectraTextClassifier
opts = FinetuneBenchOptions(data_dir=os.environ.get("PROBE_DATA", "/tmp/democlone/data"))
encoder, splits, labels, _ = workload(opts)
texts = [t for t, _ in splits["train"]]; y = [labels[l] for _, l in splits["train"]]
keras.utils.set_random_seed(0)
m = ElectraTextClassifier.from_source(str(encoder), labels=labels, sequence_length=128, pad_to=sys.argv[2] if len(sys.argv) > 2 else "longest", dropout=float(os.environ.get("DROPOUT", "0.1")))
class T(keras.callbacks.Callback):
    def on_train_begin(self, logs=None): self.t = time.time(); self.e = []; self.steps = []
    def on_train_batch_end(self, batch, logs=None): self.steps.append(time.time())
    def on_epoch_end(self, epoch, logs=None): self.e.append(time.time() - self.t); self.t = time.time()
cb = T()
t0 = time.time(); m.fit(texts, y, epochs=int(sys.argv[1]), batch_size=32, seed=0, verbose=0, callbacks=[cb]); fit_s = time.time() - t0
d = np.diff(cb.steps)
dev = [t for t, _ in splits["dev"]]
pred = []
for _ in range(2):
    t = time.time(); p = m.predict(dev); pred.append(round(time.time() - t, 1))
acc = float(np.mean(np.argmax(p, -1) == np.array([l for _, l in splits["dev"]])))
print(json.dumps({"backend": keras.config.backend(), "fit_s": round(fit_s, 1), "epoch_s": [round(x, 1) for x in cb.e],
                  "step_s_median_last_epoch": round(float(np.median(d[-20:])), 3), "step_s_max": round(float(d.max()), 2),
                  "n_steps": len(cb.steps), "predict_300_s": pred, "dev_acc": acc}))
