"""Makes TensorFlow (and the packages that need it) absent, as on the lent GPU machine.

A child process started with this folder first on PYTHONPATH runs this at start-up
(Python imports `sitecustomize` by itself). Every import finder is wrapped so that it does
not find the blocked packages: `importlib.util.find_spec("tensorflow")` is None and
`import tensorflow` raises ModuleNotFoundError, as where the package is not installed
(libraries such as transformers probe with `find_spec` and must see it absent).
"""

import sys

BLOCKED = ("tensorflow", "tensorflow_text", "tf_keras", "tensorflow_hub", "tensorflow_datasets")


class _Without:
    """A meta-path finder that is `finder` except for the blocked packages."""

    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            return None
        find = getattr(self.finder, "find_spec", None)
        return None if find is None else find(name, path, target)

    def __getattr__(self, name):
        return getattr(self.finder, name)


sys.meta_path[:] = [_Without(finder) for finder in sys.meta_path]
