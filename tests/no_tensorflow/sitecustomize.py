"""Makes TensorFlow (and the packages that need it) unimportable, as on the lent GPU machine.

A child process started with this folder first on PYTHONPATH runs this at start-up
(Python imports `sitecustomize` by itself), so any `import tensorflow` there raises
ModuleNotFoundError as if the package were not installed.
"""

import sys

BLOCKED = ("tensorflow", "tensorflow_text", "tf_keras", "tensorflow_hub", "tensorflow_datasets")


class _NoTensorFlow:
    """A meta-path finder that refuses the blocked packages."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, _NoTensorFlow())
