"""Weights after the loads whose initial draws e72891a skips, for comparing two commits.

argv[1]: output npz; argv[2]: a MiniLM Hugging Face folder. One process, Keras seeded once
at the start and never again, so any change in the global random state a skipped draw made
would show in every later draw: (a) `pretrain --init`'s warm start (`load_warm_start` ->
`with_vocabulary`) and the pre-trainer built from it, generator drawn; (b) the same model
saved as a run, exported (SavedModel) and written as a keras-hub preset, each read by
`load_initialization` and a classifier built on it (its head drawn).
"""
import os, sys, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, keras
import electra_tf.finetuning.run  # noqa: F401  (registers the kinds)
from electra_tf.config import load_recipe
from electra_tf.datasets.tasks import Task
from electra_tf.pretraining.checkpoint import save_pretrainer
from electra_tf.pretraining.pretrainer import ElectraPretrainer
from electra_tf.pretraining.warm_start import apply_warm_start, config_for_warm_start
from electra_tf.serving.keras_hub_preset import write_keras_hub_preset
from electra_tf.serving.saved_model import export_for_serving
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.tasks.initialization import load_initialization, load_warm_start
from electra_tf.tasks.registry import get_kind

out, minilm = sys.argv[1], sys.argv[2]
keras.utils.set_random_seed(1)
arrays = {}
warm = load_warm_start(minilm)
model = ElectraPretrainer(config_for_warm_start(load_recipe("adapt"), warm))
apply_warm_start(model, warm)
for w in model.weights:
    arrays["warm/" + w.path] = np.asarray(w.numpy())
tmp = tempfile.mkdtemp()
save_pretrainer(model, f"{tmp}/run")
served = export_for_serving(model, f"{tmp}/serving", vocab_file=warm.vocab_file, warmup=False)
write_keras_hub_preset(model, f"{tmp}/preset", vocab_file=warm.vocab_file)
for name, spec in (("run", f"{tmp}/run"), ("serving", str(served)), ("preset", f"{tmp}/preset")):
    init = load_initialization(spec, vocab_file=warm.vocab_file)
    kind = get_kind("classification")(Task("x", "classification", ("a", "b"), ("text", None, "label")), {})
    clf = kind.build(init, FinetuneConfig(defaults="paper"))
    for w in clf.weights:
        arrays[f"{name}/" + w.path] = np.asarray(w.numpy())
np.savez(out, **arrays)
print(len(arrays), "arrays")
