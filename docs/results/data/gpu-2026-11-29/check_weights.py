"""Here, on TensorFlow, after a device call: the GPU run's discriminator gives its logits.

    python check_weights.py CALL_DIR BATCHES.npz   # CALL_DIR: device.jsonl, pretrainer.json,
                                                   # discriminator.weights.h5.part-*
Joins the parts, builds the pretrainer from `pretrainer.json`, loads the discriminator's
weights and prints the largest difference from the `device_run` record's `probe_logits`
(the rule: within 1e-4), as one JSON line.
"""

import glob
import json
import os
import sys

import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def main(folder, batches):
    run = [json.loads(line) for line in open(os.path.join(folder, "device.jsonl"))]
    run = [r for r in run if r["kind"] == "device_run"][-1]
    weights = os.path.join(folder, "discriminator.joined.weights.h5")  # Keras reads *.weights.h5
    with open(weights, "wb") as out:
        for part in sorted(glob.glob(os.path.join(folder, "discriminator.weights.h5.part-*"))):
            out.write(open(part, "rb").read())
    config = ElectraConfig.from_json(open(os.path.join(folder, "pretrainer.json")).read())
    model = ElectraPretrainer(config)
    arrays = np.load(batches)
    first = {key: arrays[key].reshape(-1, arrays[key].shape[-1])[:2] for key in arrays.files}
    model.discriminator(first)
    model.discriminator.load_weights(weights)
    logits = np.asarray(model.discriminator(first, training=False))
    gap = float(np.abs(logits - np.array(run["probe_logits"])).max())
    print(json.dumps({"max_abs_difference": gap, "within_1e-4": gap <= 1e-4, "rows": 2}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
