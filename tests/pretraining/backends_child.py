"""Run by test_backends.py's default fixture under one KERAS_BACKEND: both children's work
in one process (one import of the backend less).

`python backends_child.py WEIGHTS OUT SAMPLER FOLDER [CASES...]` runs `backend_child.main`
(`WEIGHTS`, `OUT`, `SAMPLER`), then `objectives_child.main` (`FOLDER`, `CASES`, every case
when none is given); each waits, as there, for the weights the TensorFlow run writes.
"""

from __future__ import annotations

import sys

import backend_child
import objectives_child


def main(weights: str, out: str, sampler: str, folder: str, cases) -> None:
    """The one-batch outputs of `backend_child`, then the objectives of `objectives_child`."""
    backend_child.main(weights, out, sampler)
    objectives_child.main(folder, list(cases) or list(objectives_child.CASES))


if __name__ == "__main__":
    main(*sys.argv[1:5], sys.argv[5:])
