"""Ask an exported fine-tuned SavedModel for labels from a fresh Python process.

The child process imports TensorFlow and tensorflow-text only, never this
package: what it answers is what any client of the SavedModel would get.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

__all__ = ["classify_in_fresh_process", "CLASSIFY_SCRIPT"]

#: The child's program: `python -c CLASSIFY_SCRIPT FOLDER` with a JSON list of texts on stdin.
CLASSIFY_SCRIPT = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the text signature's ops)
assert "electra_tf" not in sys.modules
texts = json.load(sys.stdin)
served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
outputs = {k: v.numpy().tolist() for k, v in served(text=tf.constant(texts)).items()}
rows = []
for i, text in enumerate(texts):
    row = {"text": text}
    for name, values in outputs.items():
        value = values[i]
        row[name] = value.decode() if isinstance(value, bytes) else value
    rows.append(row)
assert "electra_tf" not in sys.modules
print(json.dumps(rows))
"""


def classify_in_fresh_process(folder, texts, timeout: float = 600.0) -> list[dict]:
    """Per text, every output of the export's `serving_default`, computed in a new process
    that never imports electra_tf (label names decoded to str)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", CLASSIFY_SCRIPT, os.path.abspath(folder)],
        input=json.dumps(list(texts)),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=os.path.dirname(os.path.abspath(folder)),
    )
    if done.returncode != 0:
        raise RuntimeError(f"The export {folder} did not answer: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
