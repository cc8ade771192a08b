"""Runs an `electra-tf` command (argv) and prints one JSON line to stderr: each traced
function's seconds and graph ops (those over 0.5 s), the first batch's seconds, and which
tree's package ran."""
import sys, time, json, atexit
import tensorflow.python.eager.polymorphic_function.tracing_compilation as tc
record, marks = {"traces": {}}, []
_cc = tc._create_concrete_function
def cc(function_type, type_context, func_graph, tracing_options):
    t = time.perf_counter()
    try: return _cc(function_type, type_context, func_graph, tracing_options)
    finally:
        d = time.perf_counter() - t
        if d > 0.5:
            record["traces"][tracing_options.name] = {"s": round(d, 3), "ops": len(func_graph.get_operations())}
tc._create_concrete_function = cc
import electra_tf
from electra_tf.finetuning import engine
record["package"] = electra_tf.__file__
orig = engine.EpochSelection.on_train_batch_begin
def begin(self, batch, logs=None):
    marks.append(time.perf_counter()); return orig(self, batch, logs)
engine.EpochSelection.on_train_batch_begin = begin
@atexit.register
def report():
    record["first_batch_s"] = round(marks[1] - marks[0], 3) if len(marks) > 1 else None
    print("PROBE " + json.dumps(record), file=sys.stderr)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
