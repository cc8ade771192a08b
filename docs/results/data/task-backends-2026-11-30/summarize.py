"""Per backend and model: the largest differences from TensorFlow after the same fine-tuning.

Run from the clone's root after
`pytest --basetemp=/tmp/task-backends tests/finetuning/test_task_backends.py`:
`python docs/results/data/task-backends-2026-11-30/summarize.py /tmp/task-backends/task_backends0`
(one JSON line per backend and model)."""

import json
import sys

import numpy as np

folder = sys.argv[1]
reference = dict(np.load(f"{folder}/tensorflow.npz"))
for backend in ("jax", "torch"):
    ours = dict(np.load(f"{folder}/{backend}.npz"))
    for name in ("classifier", "tagger", "answerer"):
        keys = [k for k in reference if k.startswith(f"{name}.weight.")]
        diffs = {k: float(np.max(np.abs(ours[k] - reference[k]))) for k in keys}
        row = {
            "backend": backend,
            "model": name,
            "weights": len(keys),
            "outputs_before": float(np.max(np.abs(ours[f"{name}.before"] - reference[f"{name}.before"]))),
            "outputs_after": float(np.max(np.abs(ours[f"{name}.after"] - reference[f"{name}.after"]))),
            "outputs_moved_by_training": float(
                np.max(np.abs(reference[f"{name}.after"] - reference[f"{name}.before"]))
            ),
            "weights_max_abs_diff_sorted_top3": sorted(diffs.values(), reverse=True)[:3],
        }
        if f"{name}.evaluate" in reference:
            row["evaluate_max_abs_diff"] = float(
                np.max(np.abs(ours[f"{name}.evaluate"] - reference[f"{name}.evaluate"]))
            )
        print(json.dumps(row))
