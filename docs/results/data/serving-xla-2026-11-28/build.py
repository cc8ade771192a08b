"""Build a MiniLM-shaped classifier and export plain / xla (packed) / xla (padded)."""
import sys, shutil, json
import numpy as np, tensorflow as tf
from pathlib import Path
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks import export as ex
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
rng = np.random.default_rng(0)
words = sorted({"".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(rng.integers(2, 8)))) for _ in range(3000)})
tokens = list(SPECIAL_TOKENS) + words
tf.keras.utils.set_random_seed(1)
enc = ElectraEncoder(vocabulary_size=len(tokens), num_layers=6, hidden_dim=384, embedding_dim=384, num_heads=12, intermediate_dim=1536, max_sequence_length=128)
model = ElectraTextClassifier(enc, ["neg", "pos"], "classification", ElectraTextClassifierPreprocessor(tokens, sequence_length=128))
model.build()
texts = [" ".join(rng.choice(words, size=int(rng.integers(8, 40)))) for _ in range(400)]
out = Path("/tmp/x/exp"); shutil.rmtree(out, ignore_errors=True)
json.dump(texts, open("/tmp/x/texts.json", "w"))
info = {"kind": "classification", "labels": ["neg", "pos"], "pair": False}
orig = ex.TaskServingModule
for name, kw in [("plain", {}), ("xla", {"jit_compile": True}), ("xla_padded", {"jit_compile": True, "skip_padding": False})]:
    ex.TaskServingModule = lambda *a, **k: orig(*a, **{**k, **kw})
    print(ex.export_finetuned(model, info, out, model_name=name, warmup=False))
