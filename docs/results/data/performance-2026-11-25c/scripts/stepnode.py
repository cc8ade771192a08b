import os, sys, tempfile, glob, collections, re, numpy as np, time
import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2
from electra_tf.bench.step import StepOptions, build_step
config, model, step = build_step(StepOptions(recipe="small", batch=32, seq=128))
for _ in range(4): step()
n = 4
logdir = tempfile.mkdtemp()
tf.profiler.experimental.start(logdir, options=tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=0, device_tracer_level=1))
t0=time.perf_counter()
for _ in range(n): step()
el=(time.perf_counter()-t0)/n
tf.profiler.experimental.stop()
p = glob.glob(os.path.join(logdir,"**","*.xplane.pb"), recursive=True)[0]
space = xplane_pb2.XSpace(); space.ParseFromString(open(p,"rb").read())
tot = collections.defaultdict(float); cnt = collections.Counter(); lines=collections.Counter()
groups = collections.defaultdict(float)
for plane in space.planes:
    if not plane.name.startswith("/host:"): continue
    for line in plane.lines:
        if line.name == "python": continue
        for ev in line.events:
            name = plane.event_metadata[ev.metadata_id].name
            if ":" not in name or name.startswith(("ThreadpoolListener","Memory")): continue
            node, kernel = name.rsplit(":",1); kernel=kernel.strip()
            if kernel in ("Process","Run") or kernel.startswith("__inference"): continue
            nn = re.sub(r"_\d+", "_N", node); nn = re.sub(r"\d+", "N", nn)
            d = ev.duration_ps*1e-12/n
            tot[(kernel, nn)] += d; cnt[(kernel,nn)] += 1; lines[line.name]+=d
            g = ("grad " if "gradients" in node.lower() or "Grad" in node else "fwd ") + ("gen" if "generator" in node else "disc" if "discriminator" in node else "opt" if "optimizer" in node.lower() or "adamw" in node.lower() else "other")
            groups[g] += d
print("step s (profiled)", el)
print("kernel ms per step", sum(tot.values())*1e3)
print({k: round(v*1e3,1) for k,v in lines.items()})
print({k: round(v*1e3,1) for k,v in sorted(groups.items())})
for (k,nn),v in sorted(tot.items(), key=lambda kv:-kv[1])[:70]:
    print(f"{v*1000:8.2f} ms {cnt[(k,nn)]//n:5d}x {k:28s} {nn[-110:]}")
