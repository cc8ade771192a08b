"""Max differences between a TensorFlow run resumed on another backend and the same resume on
TensorFlow: python compare.py TF_RESUMED OTHER_RESUMED TWO_STEP_SOURCE (prints one JSON line)."""
import sys, numpy as np, json
sys.path.insert(0, "tests"); sys.path.insert(0, "tests/pretraining")
from helpers import pretrainer_values
from electra_tf.pretraining.checkpoint import load_pretrainer
ref, o, two = (pretrainer_values(load_pretrainer(x)) for x in sys.argv[1:4])
tr = [k for k in ref if k.startswith("trainable.")]; op = [k for k in ref if k.startswith("optimizer.") and ref[k].size > 1]
out = {
 "weights_max_abs_diff": max(float(np.max(np.abs(o[k] - ref[k]))) for k in tr),
 "weights_max_move_from_step_2": max(float(np.max(np.abs(ref[k] - two[k]))) for k in tr),
 "moments_max_abs_diff": max(float(np.max(np.abs(o[k] - ref[k]))) for k in op),
 "moments_max_abs": max(float(np.max(np.abs(ref[k]))) for k in op),
 "iterations": [int(o["optimizer.00000"]), int(ref["optimizer.00000"])],
}
print(json.dumps(out))
