"""Largest differences between objectives_child.py's outputs on TensorFlow and the others.

`python objectives_equality.py FOLDER` reads FOLDER/{tensorflow,jax,torch}.npz (written by
tests/pretraining/objectives_child.py) and prints one JSON line per objective and backend.
"""

import json
import sys

import numpy as np

folder = sys.argv[1]
runs = {b: np.load(f"{folder}/{b}.npz") for b in ("tensorflow", "jax", "torch")}
reference = runs["tensorflow"]
cases = sorted({k.split("/")[0] for k in reference.files if k != "backend"})


def largest(keys, other):
    if not keys:
        return None
    return max(float(np.abs(reference[k] - other[k]).max()) for k in keys)


for case in cases:
    keys = [k for k in reference.files if k.startswith(case + "/")]
    floats = [k for k in keys if reference[k].dtype.kind == "f" and "/initial/" not in k]
    integers = [k for k in keys if reference[k].dtype.kind in "iu"]
    for backend in ("jax", "torch"):
        other = runs[backend]
        group = {
            "loss": [f"{case}/loss"],
            "reports": [k for k in floats if k.split("/")[1] in ("mlm", "discriminator", "extra")],
            "grad/": [k for k in floats if "/grad/" in k],
            "fit/": [k for k in floats if "/fit/" in k],
            "weight/": [k for k in floats if "/weight/" in k],
        }
        record = {"objective": case, "backend": backend}
        record["integer_arrays"] = len(integers)
        record["integer_arrays_identical"] = all(
            np.array_equal(reference[k], other[k]) for k in integers
        )
        for name, group_keys in group.items():
            record[f"max_abs_diff {name}"] = largest(group_keys, other)
        record["loss"] = float(reference[f"{case}/loss"])
        record["max_abs grad/"] = max(float(np.abs(reference[k]).max()) for k in group["grad/"])
        print(json.dumps(record))
