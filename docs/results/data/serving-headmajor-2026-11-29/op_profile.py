import os, sys, time, json, glob, tempfile, collections
from pathlib import Path
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(1); tf.config.threading.set_inter_op_parallelism_threads(2)
import tensorflow_text
from tensorflow.tsl.profiler.protobuf import xplane_pb2
sig = tf.saved_model.load("/tmp/bfx3/" + sys.argv[1] + "/m/1").signatures["serving_default"]
t = tf.constant(["The service was quick and friendly, and the food arrived hot; we would go back again."])
for _ in range(30): sig(text=t)
folder = tempfile.mkdtemp()
tf.profiler.experimental.start(folder)
for _ in range(100): sig(text=t)["label"].numpy()
tf.profiler.experimental.stop()
space = xplane_pb2.XSpace()
space.ParseFromString(Path(sorted(glob.glob(f"{folder}/**/*.xplane.pb", recursive=True))[-1]).read_bytes())
count, picos = collections.Counter(), collections.Counter()
for plane in space.planes:
    for line in plane.lines:
        for event in line.events:
            nm = plane.event_metadata[event.metadata_id].name
            if ":" not in nm or "::" in nm: continue
            op = nm.rsplit(":", 1)[1]
            if "__inference" in op: continue
            count[op] += 1; picos[op] += event.duration_ps
tot = sum(picos.values()) / 100 / 1e9
print(sys.argv[1], "ops", sum(count.values()) / 100, "op_ms", round(tot, 3))
for op, _ in picos.most_common(30): print("   %-34s %7.3f %6.1f" % (op, picos[op] / 100 / 1e9, count[op] / 100))
