"""The TensorFlow train step's graph for each objective but `electra` (see graph_ops.py).

`python graph_ops_objectives.py LABEL` from a checkout's root (PYTHONPATH=.) prints one
JSON line per objective: the op count by type of its traced `train_step`. Run it before
and after a change to see whether TensorFlow's step for each objective is the same graph.
"""

import collections
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer

counts_file = os.path.join(tempfile.mkdtemp(), "unigram_counts.npy")
np.save(counts_file, np.arange(1000))
EXTRA = {
    "two_stage": ["model.generator_size_fraction=1.0", "model.weight_tying=none"],
    "unigram": [f"objective.unigram_counts={counts_file}"],
}
NAMES = sys.argv[2:] or [
    "bert_mlm",
    "replace_mlm",
    "unigram",
    "all_tokens_mlm",
    "adversarial",
    "two_stage",
]
rng = np.random.default_rng(0)
ids = rng.integers(104, 1000, size=(8, 64)).astype("int32")
ids[:, 0], ids[:, -1] = 101, 102
spec = {k: tf.TensorSpec([8, 64], tf.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
for name in NAMES:
    config = load_recipe("tiny").override(
        "model.vocabulary_size=1000", "data.sequence_length=64", "train.batch_size=8",
        f"objective.name={name}", *EXTRA.get(name, []),
    )  # fmt: skip
    pretrainer = ElectraPretrainer(config)
    pretrainer.compile()
    graph = tf.function(pretrainer.train_step).get_concrete_function(spec).graph
    graph_def = graph.as_graph_def()
    counts = collections.Counter(node.op for node in graph_def.node)
    for function in graph_def.library.function:
        counts.update(node.op for node in function.node_def)
    record = {"checkout": sys.argv[1] if len(sys.argv) > 1 else "", "objective": name}
    record.update(total=sum(counts.values()), ops=dict(sorted(counts.items())))
    print(json.dumps(record), flush=True)
