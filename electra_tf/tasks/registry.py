"""The kinds of fine-tuning task, one registered class each.

A kind (`Kind`) is everything that differs between tasks: the Keras model it
builds, its loss and metrics, how rows are read from files, labels decided and
checked, how a model is fitted, scored and asked for predictions, and what its
SavedModel returns and how those outputs read back. The engine, the CLI's
choices, `predict`, the export and the run folder ask the registry; nothing
else tests a kind's name. Adding a kind is one module in
`electra_tf/tasks/kinds/`, named after the kind, that defines a subclass with
`@register_kind` (modules whose names start with "_" hold shared bases): the
registry imports every module of that package, so nothing lists them by hand
(importing them also registers their Keras classes for `load_model`), and
`module_kind_names` gives the names without importing anything (for the CLI's
help).

Example:

>>> sorted(kind_names())
['classification', 'multi_label', 'question_answering', 'regression', 'tagging']
>>> get_kind("regression").metrics
('spearman', 'pearson')
>>> sorted(kind_names(from_files=True))
['classification', 'multi_label', 'question_answering', 'regression', 'tagging']
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from electra_tf.config import ConfigError

__all__ = ["register_kind", "get_kind", "kind_names", "load_kinds", "module_kind_names"]

_KINDS: dict = {}
_LOADED = [False]


def register_kind(cls):
    """Class decorator: registers a `Kind` subclass under its `name`."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name to register under.")
    if cls.name in _KINDS and _KINDS[cls.name] is not cls:
        raise ValueError(f"Two kinds are named {cls.name!r}: {_KINDS[cls.name]} and {cls}.")
    _KINDS[cls.name] = cls
    return cls


def load_kinds() -> None:
    """Imports every module of `electra_tf.tasks.kinds` (each registers its kinds)."""
    if _LOADED[0]:
        return
    package = importlib.import_module("electra_tf.tasks.kinds")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    _LOADED[0] = True


def module_kind_names() -> tuple:
    """The kinds' names from their modules' names, without importing them.

    >>> module_kind_names()
    ('classification', 'multi_label', 'question_answering', 'regression', 'tagging')
    """
    spec = importlib.util.find_spec("electra_tf.tasks.kinds")
    modules = pkgutil.iter_modules(spec.submodule_search_locations)
    return tuple(sorted(m.name for m in modules if not m.name.startswith("_")))


def get_kind(name: str):
    """The kind class registered as `name` (one sentence naming the choices if none)."""
    load_kinds()
    if name not in _KINDS:
        raise ConfigError(f"Unknown kind {name!r}: choose one of {', '.join(sorted(_KINDS))}.")
    return _KINDS[name]


def kind_names(from_files: bool = False) -> tuple:
    """The registered kinds' names, in registration order (`from_files`: those that
    fine-tune on the user's own files)."""
    load_kinds()
    return tuple(n for n, k in _KINDS.items() if k.from_files or not from_files)
