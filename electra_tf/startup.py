"""Start-up of an `electra-tf` process: the frameworks' optional imports left out.

`import tensorflow` also imports Keras 3, and both probe at import time for packages
they can use when present: Keras imports scikit-learn (its scikit-learn wrappers),
pandas (to accept DataFrames), matplotlib and OpenCV (its plotting helpers) and JAX
(its Orbax callback); TensorFlow Lite imports JAX (to convert JAX functions) and
TensorFlow's legacy Keras SciPy. No `electra-tf` command uses any of these through the
frameworks, and loading them was about 40% of the frameworks' import on a 2-core AVX2
machine (docs/results/performance.md, "Each command's start-up").

`defer_optional_imports` installs an import hook that answers `ImportError` to exactly
those probes: a module-level `import` of one of these packages made by one of the
modules named in `DEFERRED`, which each catch it and carry on without it. Any other
import of the same package (this package's metrics importing scikit-learn, a plot
importing matplotlib, JAX as a Keras backend) loads it as usual, when it is needed.
Only process entry points call it (`electra_tf.cli.command`, `prepare`'s spawned workers);
importing `electra_tf` as a library changes nothing in the user's process.

`pause_collector_while_frameworks_load` keeps Python's cyclic collector off while
TensorFlow and Keras load (each full collection walks every object made so far: about a
fifth of their import), then moves what they made out of its reach (`gc.freeze`: later
collections skip those objects, the frameworks' own) and turns it back on: when the first
`import` statement to end after both have loaded returns (a watch on `builtins.__import__`
for the pause only), or on a timer after `limit_s`, whichever comes first. `start_process`
does both; the same entry points call it.
"""

from __future__ import annotations

import builtins
import gc
import importlib.abc
import sys
import threading

__all__ = [
    "DEFERRED",
    "defer_optional_imports",
    "pause_collector_while_frameworks_load",
    "start_process",
]

#: importing module (prefix) -> the top-level packages its module-level probes may skip.
DEFERRED = {
    "keras.src.wrappers": ("sklearn",),
    "keras.src.trainers.data_adapters": ("pandas",),
    "keras.src.visualization": ("matplotlib", "cv2"),
    "keras.src.callbacks.orbax_checkpoint": ("jax",),  # a patch; a JAX backend has it loaded
    "tensorflow.lite": ("jax",),
    "tensorflow.python.keras": ("scipy",),
}

_MACHINERY = ("<frozen importlib.", "importlib/__init__.py", "importlib\\__init__.py")


class _OptionalProbes(importlib.abc.MetaPathFinder):
    """Refuses `DEFERRED`'s probes; finds nothing itself otherwise (the next finder does)."""

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if not any(top in names for names in DEFERRED.values()):
            return None
        importer = _importer()
        if importer is None or importer.f_code.co_name != "<module>":
            return None  # only imports run by a module's own top level
        module = importer.f_globals.get("__name__", "")
        for prefix, names in DEFERRED.items():
            if top in names and (module == prefix or module.startswith(prefix + ".")):
                raise ModuleNotFoundError(
                    f"{name} is not loaded for {module} in an electra-tf process", name=name
                )
        return None


def _importer():
    """The frame of the code whose `import` statement is being resolved: the first past
    the import machinery and this module (find_spec; the collector's watch on `__import__`)."""
    own = _importer.__code__.co_filename  # this module's frames, as compiled
    frame = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_MACHINERY[0])
        or frame.f_code.co_filename.endswith(_MACHINERY[1:])
        or frame.f_code.co_filename == own
    ):
        frame = frame.f_back
    return frame


def defer_optional_imports() -> importlib.abc.MetaPathFinder:
    """Installs the hook (once per process) and returns it."""
    for finder in sys.meta_path:
        if isinstance(finder, _OptionalProbes):
            return finder
    finder = _OptionalProbes()
    sys.meta_path.insert(0, finder)
    return finder


#: The collector's pause: its timer and the `__import__` it watches, while paused.
_PAUSE: dict = {"timer": None, "import": None}
_PAUSE_LOCK = threading.Lock()


def _loaded(name: str) -> bool:
    """Whether module `name` is imported and done running its top level."""
    module = sys.modules.get(name)
    return module is not None and not getattr(module.__spec__, "_initializing", False)


def _watching_import(*args, **kwargs):
    """`builtins.__import__` during the pause: the import, then the frameworks' check."""
    try:
        return _PAUSE["import"](*args, **kwargs)
    finally:
        if _PAUSE["timer"] is not None and _loaded("tensorflow") and _loaded("keras"):
            _resume(freeze=True)


def _resume(freeze: bool) -> None:
    with _PAUSE_LOCK:
        timer, _PAUSE["timer"] = _PAUSE["timer"], None
        if timer is None:
            return
        timer.cancel()
        if builtins.__import__ is _watching_import:
            builtins.__import__ = _PAUSE["import"]
        if freeze:
            gc.freeze()
        gc.enable()


def pause_collector_while_frameworks_load(limit_s: float = 30.0) -> bool:
    """Turns the cyclic collector off until TensorFlow and Keras have loaded (see the module
    docstring), at most `limit_s` seconds; returns whether it paused it (not if it was off
    or already paused). On the timer it is turned on without freezing anything."""
    with _PAUSE_LOCK:
        if _PAUSE["timer"] is not None or not gc.isenabled():
            return False
        timer = threading.Timer(limit_s, _resume, kwargs={"freeze": False})
        timer.daemon = True
        _PAUSE["timer"], _PAUSE["import"] = timer, builtins.__import__
        builtins.__import__ = _watching_import
        gc.disable()
        timer.start()
        return True


def start_process() -> None:
    """What a process of this package does first: `defer_optional_imports`, then
    `pause_collector_while_frameworks_load`."""
    defer_optional_imports()
    pause_collector_while_frameworks_load()
