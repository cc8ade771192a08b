"""One round's process of the tokenizer-ops A/B: export, load and serve a MiniLM-shaped
classifier with the electra-tf tree on PYTHONPATH; prints one JSON line.

    PYTHONPATH=<tree> python probe.py LABEL WORK

The model is op_profile.py's (../serving-profile-2026-11-28/): 6 layers, hidden 384, 12
heads, random weights (seed 1) over a made-up 3,000-word vocabulary, 400 texts of 8-40
words (seed 0). `export_finetuned` as `electra-tf export` calls it (warm-up requests
included), then `tf.saved_model.load`, then `serving_default` at 2 intra-op threads:
20 warm-up calls, 300 calls at batch 1 (p50), 10 at batch 32 (median).
"""

import hashlib
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def main(label: str, work: Path) -> None:
    import keras
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from electra_tf.data.vocabulary import SPECIAL_TOKENS
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.text_classifier import ElectraTextClassifier
    from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

    rng = np.random.default_rng(0)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    words = sorted({"".join(rng.choice(letters, size=int(rng.integers(2, 8))))
                    for _ in range(3000)})  # fmt: skip
    tokens = list(SPECIAL_TOKENS) + words
    keras.utils.set_random_seed(1)
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=6, hidden_dim=384,
                             embedding_dim=384, num_heads=12, intermediate_dim=1536,
                             max_sequence_length=128)  # fmt: skip
    preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=128)
    model = ElectraTextClassifier(encoder, ["neg", "pos"], "classification", preprocessor)
    model.build()
    texts = [" ".join(rng.choice(words, size=int(rng.integers(8, 40)))) for _ in range(400)]
    texts[:4] = ["A, B! c\u0007d", "", "日本 語", "émigré café (naïve) 3.5/5"]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    info = {"kind": "classification", "labels": ["neg", "pos"], "pair": False}
    start = time.perf_counter()
    export_finetuned(model, info, work / "saved_model", model_name="m")
    export_s = time.perf_counter() - start
    version = next((work / "saved_model").glob("*/*/saved_model.pb")).parent
    start = time.perf_counter()
    served = tf.saved_model.load(str(version)).signatures["serving_default"]
    load_s = time.perf_counter() - start
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel.FromString((version / "saved_model.pb").read_bytes())
    library = saved.meta_graphs[0].graph_def.library
    nodes = sum(len(f.node_def) for f in library.function)
    for i in range(20):
        served(text=tf.constant(texts[i : i + 1]))
    one = []
    for i in range(300):
        chunk = tf.constant(texts[i % 400 : i % 400 + 1])
        t = time.perf_counter()
        served(text=chunk)
        one.append((time.perf_counter() - t) * 1e3)
    many = []
    for i in range(10):
        chunk = tf.constant(texts[i * 32 : i * 32 + 32])
        t = time.perf_counter()
        served(text=chunk)
        many.append((time.perf_counter() - t) * 1e3)
    outputs = {k: v.numpy() for k, v in served(text=tf.constant(texts)).items()}
    probs = next(v for k, v in outputs.items() if v.dtype.kind == "f")
    print(json.dumps({
        "label": label, "export_s": round(export_s, 3), "load_s": round(load_s, 3),
        "batch1_p50_ms": round(statistics.median(one), 4),
        "batch32_ms": round(statistics.median(many), 2),
        "library_functions": len(library.function), "library_nodes": nodes,
        "labels_sha256": hashlib.sha256(b"|".join(
            next(v for v in outputs.values() if v.dtype.kind in "OSU").ravel())).hexdigest()[:16],
        "probs_sum": float(np.asarray(probs, np.float64).sum()),
        "probs_first": np.asarray(probs[:4], np.float64).round(8).tolist(),
        "tf": tf.__version__,
    }), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
