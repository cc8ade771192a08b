import sys, json; sys.path[:0]=["/work/main/tests"]
import numpy as np
from helpers import pretrainer_values
from electra_tf.pretraining.checkpoint import load_pretrainer
ref = load_pretrainer("/tmp/mir/m2tf"); start = pretrainer_values(load_pretrainer("/tmp/mir/m2"))
e = pretrainer_values(ref)
with np.load("/tmp/mir/m2jax/checkpoints/step-00000004/variables.npz") as d:
    got = {k: d[k] for k in d.files if k != "paths"}
tr = [k for k in e if k.startswith("trainable.")]
op = [k for k in e if k.startswith("optimizer.")]
print(json.dumps({"step_tf": int(ref.optimizer.iterations.numpy()),
 "weights_max_abs": max(float(np.abs(got[k]-e[k]).max()) for k in tr),
 "moments_max_abs": max(float(np.abs(got[k]-e[k]).max()) for k in op),
 "moved_max_abs": max(float(np.abs(e[k]-start[k]).max()) for k in tr),
 "n_trainable": len(tr), "n_optimizer": len(op), "keys_equal": set(got)==set(e)}))
