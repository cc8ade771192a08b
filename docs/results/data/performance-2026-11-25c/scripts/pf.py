import time, resource, numpy as np
from electra_tf.bench.step import StepOptions, build_step
config, model, step = build_step(StepOptions(recipe="small", batch=32, seq=128))
for _ in range(3): step()
for _ in range(5):
    r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.perf_counter()
    step()
    r1 = resource.getrusage(resource.RUSAGE_SELF); t1 = time.perf_counter()
    print(f"{t1-t0:.3f}s minflt {r1.ru_minflt-r0.ru_minflt} majflt {r1.ru_majflt-r0.ru_majflt} user {r1.ru_utime-r0.ru_utime:.2f} sys {r1.ru_stime-r0.ru_stime:.2f} volctx {r1.ru_nvcsw-r0.ru_nvcsw} invctx {r1.ru_nivcsw-r0.ru_nivcsw}")
