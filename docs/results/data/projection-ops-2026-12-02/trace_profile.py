import sys, time, cProfile, pstats, io
import tensorflow.python.eager.polymorphic_function.tracing_compilation as tc
_cc = tc._create_concrete_function
prof = cProfile.Profile()
def cc(function_type, type_context, func_graph, tracing_options):
    if tracing_options.name != "one_step_on_data":
        return _cc(function_type, type_context, func_graph, tracing_options)
    t = time.perf_counter(); prof.enable()
    try: return _cc(function_type, type_context, func_graph, tracing_options)
    finally:
        prof.disable(); print(f"TRACE {time.perf_counter()-t:.2f}", file=sys.stderr)
        s = io.StringIO(); st = pstats.Stats(prof, stream=s); st.sort_stats("cumulative").print_stats(60); st.sort_stats("tottime").print_stats(40)
        open("/tmp/qaprobe/prof.txt","w").write(s.getvalue()); st.dump_stats("/tmp/qaprobe/prof.out")
tc._create_concrete_function = cc
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
