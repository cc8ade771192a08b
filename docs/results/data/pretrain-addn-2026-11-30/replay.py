"""Replays one pre-training step from one state on one batch REPS times in one process;
prints how many distinct results (per-variable crc32 sets) it gets."""
import collections, json, os, sys, zlib
import contextlib, statistics, time
import tensorflow as tf
from tensorflow.python.eager import context
import electra_tf.pretraining.run as run_mod

REPS = int(os.environ.get("REPS", "60"))

def fake_fit(model, dataset, steps, callbacks, verbose, checkpointer):
    it = iter(dataset)
    for _ in range(int(os.environ.get("SKIP", "0"))):
        next(it)
    batch = next(it)
    if os.environ.get("NOMEM"):
        from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
        opts = context.context().function_call_options
        cfg = config_pb2.ConfigProto()
        cfg.ParseFromString(opts.config_proto_serialized)
        cfg.graph_options.rewrite_options.memory_optimization = rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
        opts.config_proto_serialized = cfg
        print("memory optimizer off", flush=True)
    f = tf.function(model.train_step)
    ex = os.environ.get("EXECUTOR")
    cm = context.function_executor_type(ex) if ex else contextlib.nullcontext()
    cm.__enter__()
    times = []
    vs = list(model.variables) + list(model.optimizer.variables)
    state = [v.numpy() for v in vs]
    names = [v.path for v in vs]
    results = collections.Counter()
    first = None
    for r in range(REPS):
        for v, s in zip(vs, state):
            v.assign(s)
        t0 = time.perf_counter(); f(batch); times.append(time.perf_counter() - t0)
        crcs = tuple(zlib.crc32(v.numpy().tobytes()) for v in vs)
        results[crcs] += 1
        if first is None:
            first = crcs
        elif crcs != first:
            d = [n for n, a, b in zip(names, first, crcs) if a != b]
            print(f"rep {r}: {len(d)} differ, e.g. {d[:3]}", flush=True)
    print("median step s:", statistics.median(times[1:]), "executor:", ex, flush=True)
    print("distinct results:", len(results), sorted(results.values()), flush=True)
    for k, c in results.items():
        print("variant", zlib.crc32(json.dumps(list(k)).encode()), c, flush=True)
    json.dump([[list(k), c] for k, c in results.items()] + [names], open(os.environ["OUTJ"], "w"))
    return {}

run_mod._fit = fake_fit
from electra_tf.cli import main
sys.exit(main(sys.argv[1:]))
