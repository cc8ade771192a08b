"""CPU-s of test_backends' in-process TensorFlow reference (backend_child.main and
objectives_child.main over every case), traced (as today) or eager; saves the npz files."""
import json, os, resource, sys, tempfile, time
sys.path[:0] = ["/work/base/tests", "/work/base/tests/pretraining"]
import numpy as np
mode, out = sys.argv[1], sys.argv[2]
import tensorflow as tf
from helpers import functions_run_eagerly
import backend_child, objectives_child
t0 = time.time(); c0 = resource.getrusage(resource.RUSAGE_SELF)
folder = tempfile.mkdtemp(); obj = os.path.join(folder, "objectives"); os.mkdir(obj)
np.save(os.path.join(obj, "unigram_counts.npy"), np.arange(131, dtype=np.int64))
import contextlib
ctx = functions_run_eagerly() if mode == "eager" else contextlib.nullcontext()
with ctx:
    backend_child.main(os.path.join(folder, "tiny.weights.h5"), os.path.join(out, f"batch-{mode}.npz"), "inverse_cdf")
    objectives_child.main(obj, objectives_child.CASES)
os.replace(os.path.join(obj, "tensorflow.npz"), os.path.join(out, f"objectives-{mode}.npz"))
c1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"mode": mode, "wall_s": round(time.time() - t0, 2), "cpu_s": round(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime, 2)}))
