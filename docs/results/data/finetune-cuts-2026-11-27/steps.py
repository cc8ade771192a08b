"""Per-step wall times of the bench's reviews call: python steps.py MODE TRAIN_ROWS.
MODE: base; nofused (Adam in ops); nograppler; retrace (a forced second trace after batch 3)."""
import os, sys, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
mode = sys.argv[1]
if mode == "nofused":
    import electra_tf.pretraining.optimizer as _o; _o._resource = lambda v: None
if mode == "nograppler":
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
elif mode.startswith("off:"):
    tf.config.optimizer.set_experimental_options({k: False for k in mode[4:].split(",")})
from electra_tf.bench.finetune import FinetuneBenchOptions, _train_electra_tf, workload
options = FinetuneBenchOptions(data_dir="/work/main/data", round=1, epochs=1, train_examples=int(sys.argv[2]), dev_examples=300)
encoder, splits, labels, _ = workload(options)
import keras, functools
import electra_tf.finetuning.run as r
from electra_tf.tasks.kinds import _text
T = {"steps": []}
class Cb(keras.callbacks.Callback):
    def on_train_begin(self, logs=None): self.t = time.perf_counter()
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter(); T["steps"].append(round(now - self.t, 3))
        if batch == 3 and mode == "retrace": self.model.make_train_function(force=True)
        self.t = time.perf_counter()
mk = r.make_job
def make_job(*a, **k):
    job = mk(*a, **k); f = job.fit
    job.fit = lambda model, config, seed, initial_epoch=0, callbacks=(): f(model, config, seed, initial_epoch=initial_epoch, callbacks=[Cb(), *callbacks])
    return job
r.make_job = make_job
for cls in [c for c in vars(_text).values() if isinstance(c, type) and "score" in vars(c)]:
    f0 = cls.score
    def score(self, model, split, f0=f0):
        t = time.perf_counter(); out = f0(self, model, split); T.setdefault("score", []).append(round(time.perf_counter() - t, 2)); return out
    cls.score = score
s, sc = _train_electra_tf(options, encoder, splits, labels)
st = T["steps"]
print(st[:8]); print(json.dumps({"mode": mode, "seconds": round(s, 2), "first": st[0], "median_rest": sorted(st[1:])[len(st[1:])//2], "sum_rest": round(sum(st[1:]), 2), "score": T.get("score"), **sc}))
