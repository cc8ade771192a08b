"""Seconds of the four loads a fine-tune / predict / export call starts with, in one process:
reading all-MiniLM-L6-v2's Hugging Face folder (`load_initialization`), building the
classifier from it (`Kind.build`), a pre-training checkpoint (`load_pretrainer`) and a
fine-tuned model folder (`load_finetuned`). Each timed 3 times after one untimed pass;
prints one JSON line (the medians). argv: label, HF folder, checkpoint, fine-tuned folder."""
import json, os, statistics, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import electra_tf, electra_tf.finetuning.run
from electra_tf.datasets.tasks import Task
from electra_tf.pretraining.checkpoint import load_pretrainer
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.tasks.initialization import load_initialization
from electra_tf.tasks.model_folder import load_finetuned
from electra_tf.tasks.registry import get_kind
label, hf, ckpt, tuned = sys.argv[1:5]
times = {"load_initialization": [], "build": [], "load_pretrainer": [], "load_finetuned": []}
for i in range(4):
    keras.utils.set_random_seed(1)
    t0 = time.perf_counter(); init = load_initialization(hf); t1 = time.perf_counter()
    kind = get_kind("classification")(Task("x", "classification", ("a", "b"), ("text", None, "label")), {})
    kind.build(init, FinetuneConfig(defaults="paper")); t2 = time.perf_counter()
    load_pretrainer(ckpt); t3 = time.perf_counter()
    load_finetuned(tuned); t4 = time.perf_counter()
    if i:
        for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            times[k].append(round(v, 3))
print(json.dumps({"label": label, "package": os.path.dirname(electra_tf.__file__),
                  "runs": times, "median": {k: statistics.median(v) for k, v in times.items()},
                  "total_median": round(sum(statistics.median(v) for v in times.values()), 3)}))
