"""Phase timers for `electra-tf bench qa` (argv after the script): ours' traces, first batch,
batch gaps, dev scoring, epoch ends; PyTorch's windows, load, dev scoring, steps."""
import sys, time, collections, atexit, functools, importlib
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
import tensorflow.python.eager.polymorphic_function.tracing_compilation as tc
_cc = tc._create_concrete_function
def cc(function_type, type_context, func_graph, tracing_options):
    t = time.perf_counter()
    try: return _cc(function_type, type_context, func_graph, tracing_options)
    finally:
        d = time.perf_counter() - t
        spent["trace " + tracing_options.name] += d; calls["trace " + tracing_options.name] += 1
        if d > 1:
            ops = func_graph.get_operations(); hist = collections.Counter(o.type for o in ops)
            print(f"PHASE ops {tracing_options.name}: {len(ops)}: {hist.most_common(25)}", file=sys.stderr)
tc._create_concrete_function = cc
for a in ("finetune", "train_seed", "_keep_best", "_write_predictions"):
    wrap("electra_tf.finetuning.run", a)
for a in ("EpochSelection.on_epoch_end", "_write_checkpoint", "_best_weights", "EpochSelection._write_epoch"):
    wrap("electra_tf.finetuning.engine", a)
wrap("electra_tf.tasks.kinds.question_answering", "QuestionAnswering.score")
wrap("electra_tf.tasks.initialization", "load_initialization")
for a in ("_torch_dev_f1", "windows_and_examples", "_train_electra_tf", "_train_pytorch"):
    wrap("electra_tf.bench.question_answering", a)
for a in ("answer_details", "best_threshold", "with_threshold"):
    wrap("electra_tf.datasets.squad", a)
wrap("electra_tf.tasks.question_answerer", "window_outputs")
from electra_tf.finetuning import engine
orig = engine.EpochSelection.on_train_batch_begin
def begin(self, batch, logs=None):
    marks.append(time.perf_counter()); return orig(self, batch, logs)
engine.EpochSelection.on_train_batch_begin = begin
import torch
origfwd = None
@atexit.register
def report():
    for k, v in sorted(spent.items(), key=lambda x: -x[1]): print(f"PHASE {k}: {v:.2f} s in {calls[k]} calls", file=sys.stderr)
    if len(marks) > 2:
        d = [b - a for a, b in zip(marks, marks[1:])]
        later = sorted(x for x in d[1:] if x < 1.5)
        print(f"PHASE first batch {d[0]:.2f}; median gap {later[len(later)//2]:.3f}; sum of gaps<1.5 {sum(later):.1f} n {len(later)}; gaps>1.5s {[round(x,2) for x in d[1:] if x>1.5]}", file=sys.stderr)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
