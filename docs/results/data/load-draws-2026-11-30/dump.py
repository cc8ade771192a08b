"""Dumps the weights of: a classifier built from the MiniLM folder (seeded), and a pre-trainer
loaded from a checkpoint; prints the times. argv[1]: output npz."""
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, keras
import electra_tf.finetuning.run
from electra_tf.tasks.initialization import load_initialization
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.datasets.tasks import Task
from electra_tf.tasks.registry import get_kind
from electra_tf.pretraining.checkpoint import load_pretrainer
P = "/tmp/democlone/data/models/all-MiniLM-L6-v2"
CK = "/tmp/det/a1/checkpoints/step-00000012"
out = {}
times = []
for i in range(3):
    keras.utils.set_random_seed(1)
    t = time.perf_counter(); init = load_initialization(P); t1 = time.perf_counter()
    kind = get_kind("classification")(Task("x", "classification", ("a", "b"), ("text", None, "label")), {})
    model = kind.build(init, FinetuneConfig(defaults="paper")); t2 = time.perf_counter()
    pre = load_pretrainer(CK); t3 = time.perf_counter()
    times.append((t1 - t, t2 - t1, t3 - t2))
for w in model.weights: out["clf/" + w.path] = np.asarray(w.numpy())
for w in pre.weights: out["pre/" + w.path] = np.asarray(w.numpy())
np.savez(sys.argv[1], **out)
for t in times: print("load_initialization %.3f  build %.3f  load_pretrainer %.3f" % t)
