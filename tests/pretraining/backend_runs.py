"""Children under another `KERAS_BACKEND`, shared by test_backends.py and
test_backends_objectives.py: start one, wait for it, and (in the child) wait for the weights
the TensorFlow child writes.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).parents[2]
# helpers.CHILD_PYTHON, spelled here: the children import this module without tests/ on the path
CHILD_PYTHON = (sys.executable, str(ROOT / "tests" / "child_entry.py"))


def run_child(script, backend, args, xla_flags):
    """Start `python script *args` under `backend`, with `xla_flags` as XLA_FLAGS."""
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=str(ROOT), XLA_FLAGS=xla_flags)
    command = [*CHILD_PYTHON, str(script), *map(str, args)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_child(process, backend):
    """Wait for a child; fail with the end of its output if it failed."""
    output, _ = process.communicate(timeout=900)
    assert process.returncode == 0, f"{backend} child failed:\n{output.decode()[-4000:]}"


def save_whole(pretrainer, path) -> None:
    """`pretrainer.save_weights(path)` through a temporary file, so that a child waiting with
    `wait_for` never reads half a file."""
    temporary = str(path).removesuffix(".weights.h5") + ".partial.weights.h5"
    pretrainer.save_weights(temporary)
    os.replace(temporary, path)


def wait_for(path, seconds: float = 900.0) -> None:
    """Wait until the TensorFlow child (started at the same time) has written `path`."""
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not written in {seconds:.0f} s")
        time.sleep(0.1)
