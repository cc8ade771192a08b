"""One worker of a multi-worker `electra-tf pretrain` run that also saves its weights.

Usage: python multi_worker_cli_job.py WEIGHTS_OUT PRETRAIN_ARGS...  (TF_CONFIG set by the
caller). Runs `electra_tf.cli.main(["pretrain", *PRETRAIN_ARGS])` in this process, exits
with its status, and after a finished run writes every trainable weight and the step to
WEIGHTS_OUT (.npz), so that a test can compare the workers' weights, not only the chief's
checkpoint.
"""

import gc
import sys

import numpy as np

import electra_tf.pretraining.run as run_module
from electra_tf.cli import main as cli_main

_results = []
_run_pretraining = run_module.run_pretraining


def _recording_run(*args, **kwargs):
    """`run_pretraining`, keeping its result."""
    result = _run_pretraining(*args, **kwargs)
    _results.append(result)
    return result


def main():
    out, args = sys.argv[1], sys.argv[2:]
    run_module.run_pretraining = _recording_run  # the CLI imports it from the module per call
    code = cli_main(["pretrain", *args])
    if _results:
        result = _results[-1]
        weights = {str(i): v.numpy() for i, v in enumerate(result.model.trainable_variables)}
        np.savez(out, step=result.step, **weights)
    return code


if __name__ == "__main__":
    code = main()
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
    sys.exit(code)
