"""Seconds of `export_finetuned` with signatures traced once (this change) against traced
before the save and again inside it (before), interleaved, on a tiny and a MiniLM-sized
classifier (random weights; the trace cost does not depend on them).

    python bench_export.py ROUNDS > export.json
"""

import json
import statistics
import sys
import tempfile
import time

import tensorflow as tf

from electra_tf.bench.machine import machine
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks import export
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

SIZES = {
    "tiny (1 layer, hidden 8)": dict(num_layers=1, hidden_dim=8, embedding_dim=8, num_heads=2,
                                     intermediate_dim=16),
    "MiniLM-sized (6 layers, hidden 384)": dict(num_layers=6, hidden_dim=384, embedding_dim=384,
                                                num_heads=12, intermediate_dim=1536),
}  # fmt: skip
NEW_WRITE = export._write


def _old_write(module, *args):
    """The code before this change: concrete functions traced first, then the save."""
    for name in ("serve_text", "serve", "serve_examples"):
        getattr(module, name).get_concrete_function()
    return NEW_WRITE(module, *args)


def _model(sizes):
    tokens = [*SPECIAL_TOKENS, *(f"w{i}" for i in range(1000))]
    encoder = ElectraEncoder(vocabulary_size=len(tokens), max_sequence_length=128, **sizes)
    preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=128)
    model = ElectraTextClassifier(encoder, ["no", "yes"], preprocessor=preprocessor)
    model.build()
    return model


def main(rounds):
    out = {"machine": machine(), "tensorflow": tf.__version__, "rounds": rounds}
    for label, sizes in SIZES.items():
        model = _model(sizes)
        seconds = {"before": [], "after": []}
        for _ in range(rounds):
            for arm, write in (("before", _old_write), ("after", NEW_WRITE)):
                export._write = write
                with tempfile.TemporaryDirectory() as folder:
                    start = time.perf_counter()
                    export.export_finetuned(model, {"kind": "classification"}, folder,
                                            warmup=False)  # fmt: skip
                    seconds[arm].append(round(time.perf_counter() - start, 2))
        medians = {arm: statistics.median(values) for arm, values in seconds.items()}
        out[label] = {"seconds": seconds, "median": medians,
                      "before/after": round(medians["before"] / medians["after"], 2)}  # fmt: skip
    export._write = NEW_WRITE
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
