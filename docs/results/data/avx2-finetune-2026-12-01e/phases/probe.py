"""Runs an `electra-tf` command (argv) with phase timers; NO_META=1 turns Grappler's
meta-optimizer off for the whole process first. Prints PHASE lines to stderr: the traces,
the first batch (trace + instantiation + step), the median gap between later batches."""
import sys, time, collections, atexit, functools, importlib, os
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
spent = collections.defaultdict(float); calls = collections.Counter(); marks = []
def wrap(modname, attr):
    mod = importlib.import_module(modname)
    owner, name = (mod, attr) if "." not in attr else (getattr(mod, attr.split(".")[0]), attr.split(".")[1])
    f = getattr(owner, name)
    @functools.wraps(f)
    def timed(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally: spent[attr] += time.perf_counter() - t; calls[attr] += 1
    setattr(owner, name, timed)
import keras
import tensorflow as _tf
if os.environ.get("NO_META"): _tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
import tensorflow.python.eager.polymorphic_function.tracing_compilation as tc
_cc = tc._create_concrete_function
def cc(function_type, type_context, func_graph, tracing_options):
    t = time.perf_counter()
    try: return _cc(function_type, type_context, func_graph, tracing_options)
    finally:
        d = time.perf_counter() - t
        if d > 0.2: print(f"PHASE trace {tracing_options.name}: {d:.2f} s", file=sys.stderr)
tc._create_concrete_function = cc
wrap("electra_tf.finetuning.run", "finetune")
wrap("electra_tf.finetuning.run", "train_seed")
wrap("electra_tf.finetuning.run", "_keep_best")
wrap("electra_tf.finetuning.run", "_write_predictions")
wrap("electra_tf.finetuning.run", "_cut_rows")
wrap("electra_tf.finetuning.engine", "EpochSelection.on_epoch_end")
wrap("electra_tf.finetuning.engine", "_write_checkpoint")
wrap("electra_tf.finetuning.engine", "_best_weights")
wrap("electra_tf.tasks.kind", "Kind.remembered")
wrap("electra_tf.tasks.kind", "Kind.fit_rows")
from electra_tf.finetuning import engine
orig = engine.EpochSelection.on_train_batch_begin
def begin(self, batch, logs=None):
    marks.append(time.perf_counter()); return orig(self, batch, logs)
import electra_tf.finetuning.run as _run
_ts = _run.train_seed
T0 = []
def ts(*a, **k):
    T0.append(time.perf_counter()); return _ts(*a, **k)
_run.train_seed = ts
engine.EpochSelection.on_train_batch_begin = begin
@atexit.register
def report():
    for k, v in sorted(spent.items(), key=lambda x: -x[1]): print(f"PHASE {k}: {v:.2f} s in {calls[k]} calls", file=sys.stderr)
    if len(marks) > 2:
        d = [b - a for a, b in zip(marks, marks[1:])]
        print(f"PHASE train_seed start to first batch {marks[0]-T0[0]:.2f}; sum of later gaps {sum(d[1:]):.1f} over {len(d)-1}", file=sys.stderr)
        print(f"PHASE first batch (trace+step) {d[0]:.2f}; median later gap {sorted(d[1:])[len(d[1:])//2]:.3f}; gaps>1.5s {[round(x,2) for x in d[1:] if x>1.5]}", file=sys.stderr)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
