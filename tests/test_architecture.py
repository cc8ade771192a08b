"""The package's imports point one way, and every docstring example runs."""

import ast
import doctest
import importlib
import pathlib

import numpy as np
import pytest
import tensorflow as tf

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "electra_tf"

# Lower layers first; a module may import only from its own layer or lower ones.
LAYERS = [
    "startup",  # process start-up: imports nothing of the package
    "config",
    "io",
    "metrics",
    "runtime",
    "ops",
    "data",
    "datasets",
    "layers",
    "models",
    "pretraining",
    "serving",
    "tasks",
    "finetuning",
    "probe",
    "demo",
    "experiments",
    "bench",
    "cli",
]


def _layer(module: str) -> int:
    part = module.split(".")[1] if module.count(".") else "__init__"
    if part in ("__init__", "__main__"):
        return len(LAYERS)
    return LAYERS.index(part)


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        yield ".".join(relative.parts).removesuffix(".__init__"), path


def test_imports_point_one_way():
    upward = []
    for module, path in _modules():
        if module == "electra_tf" or module.endswith("__main__"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("electra_tf.")
            ):
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("electra_tf.")]
            for name in names:
                if _layer(name) > _layer(module):
                    upward.append(f"{module} imports {name}")
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("module", [m for m, _ in _modules() if not m.endswith("__main__")])
def test_docstring_examples_run(module):
    imported = importlib.import_module(module)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {"np": np, "tf": tf, **vars(imported)}
    for test in finder.find(imported, module, globs=globs):
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed in {module}"


#: One concern per module: a module that grows past this is doing two things.
MAX_MODULE_LINES = 420


def test_no_module_outgrows_one_concern():
    long = [
        f"{module}: {lines} lines"
        for module, path in _modules()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"split these modules (over {MAX_MODULE_LINES} lines): {long}"
