"""Run by test_backends.py's default fixture under one KERAS_BACKEND: both children's work
in one process (one import of the backend less).

`python backends_child.py WEIGHTS OUT SAMPLER FOLDER [--mixed-float16 MIXED] [CASES...]`
runs `backend_child.main` (`WEIGHTS`, `OUT`, `SAMPLER`), then `objectives_child.main`
(`FOLDER`, `CASES`, every case when none is given); each waits, as there, for the weights
the TensorFlow run writes. With `--mixed-float16 MIXED`, it then runs
`mixed_float16_child.main(MIXED)`: test_portable_mixed_float16.py's work on this backend,
one import less.
"""

from __future__ import annotations

import gc
import sys

import backend_child
import objectives_child


def main(weights: str, out: str, sampler: str, folder: str, rest) -> None:
    """The one-batch outputs of `backend_child`, then the objectives of `objectives_child`,
    then (`--mixed-float16 MIXED` first in `rest`) the runs of `mixed_float16_child`."""
    rest = list(rest)
    mixed = None
    if rest[:1] == ["--mixed-float16"]:
        mixed, rest = rest[1], rest[2:]
    backend_child.main(weights, out, sampler)
    objectives_child.main(folder, rest or list(objectives_child.CASES))
    if mixed is not None:  # seeds its own weights: what ran before does not change it
        import mixed_float16_child

        mixed_float16_child.main(mixed)


if __name__ == "__main__":
    main(*sys.argv[1:5], sys.argv[5:])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
