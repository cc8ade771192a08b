"""A classifier's training step with the first-position attention as einsums (the old form,
Keras's attention layer) and as elementwise products summed (the new form), interleaved.

MiniLM-L6's sizes (6 blocks, hidden 384, 12 heads, intermediate 1536), batch 32, length 128,
dropout 0.1, TensorFlow, float32. One JSON line per (round, form): the median of 20 steps.
Usage: python step_time.py [ROUNDS] > step_time.jsonl
"""

import json
import sys
import time

import keras
import numpy as np

from electra_tf.models import encoder as encoder_module
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.classifier import ElectraClassifier

NEW = encoder_module._attention_from_one_query


def old(attention, query, x, mask, training):
    return attention(query=query, value=x, key=x, attention_mask=mask, training=training)


def model():
    keras.utils.set_random_seed(0)
    encoder = ElectraEncoder(
        vocabulary_size=30522, num_layers=6, hidden_dim=384, embedding_dim=384, num_heads=12,
        intermediate_dim=1536, max_sequence_length=512, num_segments=2, dropout=0.1,
    )  # fmt: skip
    classifier = ElectraClassifier(encoder, num_outputs=2)
    classifier.compile(optimizer=keras.optimizers.Adam(1e-5),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))  # fmt: skip
    return classifier


def main(rounds=3):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 30000, size=(32, 128)).astype("int32")
    x = {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
    y = rng.integers(0, 2, size=32).astype("int32")
    models = {}
    for name, form in (("einsum", old), ("elementwise", NEW)):
        encoder_module._attention_from_one_query = form
        models[name] = model()
        models[name].train_on_batch(x, y)  # trace
    for r in range(rounds):
        for name in models:
            times = []
            for _ in range(20):
                start = time.perf_counter()
                models[name].train_on_batch(x, y)
                times.append(time.perf_counter() - start)
            print(json.dumps({"round": r, "form": name, "median_ms": 1000 * float(np.median(times))}),
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
