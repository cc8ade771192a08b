"""Process-wide TensorFlow settings that a job's call takes for its own traces.

- `op_stacks`: one fixed op-creation stack instead of TensorFlow's per-op Python stack;
- `grappler`: functions first called inside run without Grappler's graph rewrites.

They change how TensorFlow builds and runs the job's functions, not what they compute;
the model and step code (`electra_tf.ops`, `models`, `layers`, `pretraining`) never
imports them.
"""

from electra_tf.runtime import grappler, op_stacks

__all__ = ["grappler", "op_stacks"]
