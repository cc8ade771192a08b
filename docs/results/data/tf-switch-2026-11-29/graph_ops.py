"""The TensorFlow train step's traced graph, op type by op type (a JSON line), in float32
or mixed_float16: `PYTHONPATH=CHECKOUT python graph_ops.py LABEL PRECISION`.

The same as ../backends-2026-11-28/graph_ops.py with the precision as an argument, run
in the main checkout (before) and in the branch (after) to see whether TensorFlow's step
is the same graph.
"""

import collections
import json
import sys

import tensorflow as tf

from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer

label, precision = sys.argv[1], sys.argv[2]
config = load_recipe("tiny").override(
    "model.vocabulary_size=1000",
    "data.sequence_length=64",
    "train.batch_size=8",
    f"train.mixed_precision={precision}",
)
pretrainer = ElectraPretrainer(config)
pretrainer.compile()
graph = (
    tf.function(pretrainer.train_step)
    .get_concrete_function(
        {k: tf.TensorSpec([8, 64], tf.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
    )
    .graph
)
graph_def = graph.as_graph_def()
counts = collections.Counter(node.op for node in graph_def.node)
for function in graph_def.library.function:
    counts.update(node.op for node in function.node_def)
record = {"checkout": label, "precision": precision, "total": sum(counts.values())}
print(json.dumps({**record, "ops": dict(sorted(counts.items()))}))
