"""One worker of the 2-process MultiWorkerMirroredStrategy test (run as a subprocess).

Usage: python multi_worker_job.py DATA_DIR RUN_DIR WEIGHTS_OUT  (TF_CONFIG set by the caller)
"""

import gc
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from helpers import tiny_config  # noqa: E402

from electra_tf.pretraining.run import config_for_data, run_pretraining  # noqa: E402


def main():
    data, run, out = sys.argv[1:4]
    config = tiny_config(
        f"data.train_files={data}",
        "train.strategy=multi_worker",
        "train.batch_size=8",
        "train.num_steps=4",
        "train.checkpoint_every=2",
        "train.log_every=2",
    )
    config = config_for_data(config)
    result = run_pretraining(config, run, verbose=0)
    weights = {str(i): v.numpy() for i, v in enumerate(result.model.trainable_variables)}
    np.savez(out, step=result.step, **weights)


if __name__ == "__main__":
    main()
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
