"""Largest differences between backend_child.py's outputs on TensorFlow and on the others.

`python equality.py tensorflow.npz jax.npz torch.npz` prints one JSON line per backend.
"""

import json
import sys

import numpy as np

reference = np.load(sys.argv[1])
for path in sys.argv[2:]:
    other = np.load(path)
    record = {"backend": str(other["backend"]), "file": path}
    integer_keys = [k for k in reference.files if reference[k].dtype.kind in "iu" and k != "backend"]
    record["integer_arrays_identical"] = all(np.array_equal(reference[k], other[k]) for k in integer_keys)
    record["integer_arrays"] = len(integer_keys)
    for prefix in ("loss", "mlm/cross_entropy", "discriminator/logits", "grad/", "fit/", "weight/"):
        keys = [k for k in reference.files if k.startswith(prefix) and reference[k].dtype.kind == "f"]
        record[f"max_abs_diff {prefix}"] = max(float(np.abs(reference[k] - other[k]).max()) for k in keys)
        record[f"max_abs {prefix}"] = max(float(np.abs(reference[k]).max()) for k in keys)
    if "dp/devices" in other.files:
        keys = [k for k in other.files if k.startswith("weight/")]
        record["data_parallel_devices"] = int(other["dp/devices"])
        record["data_parallel_vs_one_device max_abs_diff weight/"] = max(
            float(np.abs(other[k] - other["dp/" + k]).max()) for k in keys
        )
    print(json.dumps(record))
