import sys, time, gc, os
import tensorflow.python.eager.polymorphic_function.tracing_compilation as tc
_cc = tc._create_concrete_function
MODE = os.environ.get("GCMODE", "on")
def cc(function_type, type_context, func_graph, tracing_options):
    t = time.perf_counter(); c0 = gc.get_stats()
    if MODE == "off": gc.disable()
    try: return _cc(function_type, type_context, func_graph, tracing_options)
    finally:
        if MODE == "off": gc.enable()
        d = time.perf_counter() - t
        if d > 0.5: print(f"TRACE {MODE} {tracing_options.name} {d:.2f} collections {[s['collections'] for s in gc.get_stats()]} before {[s['collections'] for s in c0]}", file=sys.stderr)
tc._create_concrete_function = cc
cb = []
gc.callbacks.append(lambda phase, info: cb.append(time.perf_counter()) if phase == "start" else None)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
