"""Unprofiled wall time of the phases of bench finetune's reviews call."""
import os, sys, time, json, functools
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from electra_tf.bench.finetune import FinetuneBenchOptions, _train_electra_tf, workload
options = FinetuneBenchOptions(data_dir="/work/main/data", round=1, epochs=int(sys.argv[1]))
encoder, splits, labels, _ = workload(options)
from electra_tf.finetuning import engine, run
from electra_tf.tasks import model_folder
from electra_tf.tasks.kinds import _text
import keras
T = {}
def timed(owner, name, key):
    f = getattr(owner, name)
    @functools.wraps(f)
    def w(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally: T[key] = T.get(key, 0) + time.perf_counter() - t
    setattr(owner, name, w)
timed(engine.EpochSelection, "_write_epoch", "checkpoints")
timed(engine, "write_best", "best"); timed(engine, "_best_weights", "best weights end")
timed(engine, "first_nonfinite_weight", "nonfinite")
timed(run, "write_model_folder", "kept model")
timed(run, "_write_predictions", "predictions")
timed(run, "_cut_rows", "cut rows")
timed(engine.EpochSelection, "on_epoch_end", "epoch ends")
for cls in [c for c in vars(_text).values() if isinstance(c, type) and hasattr(c, "score")]:
    timed(cls, "score", "score")
class First(keras.callbacks.Callback):
    def on_train_begin(self, logs=None): self.t = time.perf_counter()
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0 and "first step" not in T: T["first step"] = time.perf_counter() - self.t
orig_fit = engine.EpochSelection.__init__
class FitT(keras.callbacks.Callback): pass
old = engine.train_seed
# inject the First callback through job.fit
def patch_fit():
    import electra_tf.finetuning.run as r
    mk = r.make_job
    def make_job(*a, **k):
        job = mk(*a, **k)
        f = job.fit
        def fit(model, config, seed, initial_epoch=0, callbacks=()):
            t = time.perf_counter()
            try: return f(model, config, seed, initial_epoch=initial_epoch, callbacks=[First(), *callbacks])
            finally: T["fit"] = T.get("fit", 0) + time.perf_counter() - t
        job.fit = fit
        return job
    r.make_job = make_job
patch_fit()
seconds, scores = _train_electra_tf(options, encoder, splits, labels)
print(json.dumps({"seconds": round(seconds, 2), **{k: round(v, 2) for k, v in T.items()}, **scores}))
