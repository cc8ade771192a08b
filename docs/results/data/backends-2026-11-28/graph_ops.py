"""The TensorFlow train step's traced graph, op type by op type (a JSON line).

Run in two checkouts (before and after a change) to see whether TensorFlow's step
is the same graph: the same ops run the same kernels, so the same speed.
`python graph_ops.py` from the checkout's root (PYTHONPATH=.).
"""

import collections
import json
import sys

import numpy as np
import tensorflow as tf

from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer

config = load_recipe("tiny").override(
    "model.vocabulary_size=1000", "data.sequence_length=64", "train.batch_size=8"
)
pretrainer = ElectraPretrainer(config)
pretrainer.compile()
rng = np.random.default_rng(0)
ids = rng.integers(104, 1000, size=(8, 64)).astype("int32")
ids[:, 0], ids[:, -1] = 101, 102
batch = {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
graph = tf.function(pretrainer.train_step).get_concrete_function(
    {k: tf.TensorSpec([8, 64], tf.int32) for k in batch}
).graph


def ops_of(graph_def_functions, nodes):
    counts = collections.Counter(node.op for node in nodes)
    for function in graph_def_functions:
        counts.update(node.op for node in function.node_def)
    return counts


graph_def = graph.as_graph_def()
counts = ops_of(graph_def.library.function, graph_def.node)
print(json.dumps({"checkout": sys.argv[1] if len(sys.argv) > 1 else "", "total": sum(counts.values()), "ops": dict(sorted(counts.items()))}))
