"""`electra_tf.startup.defer_optional_imports`: an import hook that refuses exactly the
module-level probes named in `DEFERRED` and lets every other import of the same package
load. A stand-in package written here plays the probed one (the real ones are loaded in
this process already, so no hook would be asked); tests/data/test_worker_exit.py checks
the real frameworks in a spawned `prepare` worker. The collector's pause while the
frameworks load is checked in fresh interpreters (its state is per process)."""

import sys

import pytest

from electra_tf import startup

PROBED = "electra_probe_target"
OTHER = "electra_probe_other"  # not deferred for anyone
PROBER = "keras.src.wrappers.stand_in"  # under a DEFERRED prefix


@pytest.fixture
def hooked(monkeypatch, tmp_path):
    """The hook installed in a copy of `sys.meta_path` (restored after the test), with
    `PROBED` deferred for `keras.src.wrappers` and importable from `tmp_path`."""
    (tmp_path / f"{PROBED}.py").write_text("VALUE = 7\n")
    (tmp_path / f"{OTHER}.py").write_text("VALUE = 8\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setitem(startup.DEFERRED, "keras.src.wrappers", ("sklearn", PROBED))
    for name in (PROBED, OTHER):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield startup.defer_optional_imports()
    for name in (PROBED, OTHER):
        sys.modules.pop(name, None)


def _run_as(module_name: str, source: str) -> dict:
    """Runs `source` as the top level of a module called `module_name`."""
    namespace = {"__name__": module_name}
    exec(compile(source, f"<{module_name}>", "exec"), namespace)
    return namespace


def test_a_deferred_modules_top_level_probe_is_refused_and_leaves_nothing_loaded(hooked):
    probe = f"try:\n    import {PROBED}\nexcept ImportError as e:\n    {PROBED} = e\n"
    error = _run_as(PROBER, probe)[PROBED]
    assert isinstance(error, ModuleNotFoundError) and error.name == PROBED
    assert f"{PROBED} is not loaded for {PROBER}" in str(error)
    assert PROBED not in sys.modules
    # the same name from a module outside DEFERRED loads, and later probes find it loaded
    assert _run_as("electra_tf.metrics_stand_in", f"import {PROBED}")[PROBED].VALUE == 7
    assert _run_as(PROBER, probe)[PROBED].VALUE == 7


def test_imports_inside_functions_and_other_packages_load_as_usual(hooked):
    inside = f"def load():\n    import {PROBED}\n    return {PROBED}\nmodule = load()\n"
    assert _run_as(PROBER, inside)["module"].VALUE == 7
    sys.modules.pop(PROBED)
    # a prefix match is by whole module path: keras.src.wrappersX is not keras.src.wrappers
    assert _run_as("keras.src.wrappersX", f"import {PROBED}")[PROBED].VALUE == 7
    sys.modules.pop(PROBED)
    # a package not deferred for this module loads from its top level too
    assert _run_as(PROBER, f"import {OTHER}")[OTHER].VALUE == 8


def test_the_hook_is_installed_once_and_first(hooked):
    assert startup.defer_optional_imports() is hooked
    assert sys.meta_path[0] is hooked
    assert sum(isinstance(f, type(hooked)) for f in sys.meta_path) == 1


def _child(code: str) -> list[str]:
    """The lines `code` prints in a fresh interpreter (the collector's state is per process)."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


def test_the_collector_waits_for_tensorflow_and_keras_then_freezes_what_they_made():
    """Off from `start_process` until the `import` statement that loaded both frameworks
    returns (no collection runs during it); then their objects are frozen (later
    collections skip them), the collector is on and `__import__` is Python's own again."""
    code = (
        "import builtins, gc, sys\n"
        "from electra_tf import startup\n"
        "own = builtins.__import__\n"
        "print(startup.start_process() is None, gc.isenabled(), builtins.__import__ is own)\n"
        "print(startup.pause_collector_while_frameworks_load())\n"  # already paused
        "before = [s['collections'] for s in gc.get_stats()]\n"
        "import tensorflow\n"  # imports Keras
        "after = [s['collections'] for s in gc.get_stats()]\n"
        "print('keras' in sys.modules, before == after, gc.isenabled())\n"
        "print(gc.get_freeze_count() > 100000, builtins.__import__ is own)\n"
        "print(any(name in sys.modules for name in ('sklearn', 'pandas', 'matplotlib')))\n"
    )
    lines = _child(code)
    assert lines[:4] == ["True", "False", "False", "False"]  # paused (watching), once
    assert lines[4:9] == ["True", "True", "True", "True", "True"]
    assert lines[9:] == ["False"]  # the probes stay refused through the watch


def test_without_the_frameworks_the_timer_turns_the_collector_back_on_unfrozen():
    code = (
        "import builtins, gc, time\n"
        "from electra_tf import startup\n"
        "own = builtins.__import__\n"
        "print(startup.pause_collector_while_frameworks_load(limit_s=0.2), gc.isenabled())\n"
        "time.sleep(1.0)\n"
        "print(gc.isenabled(), gc.get_freeze_count(), builtins.__import__ is own)\n"
        "gc.disable()\n"
        "print(startup.pause_collector_while_frameworks_load())\n"  # off already: not paused
    )
    assert _child(code) == ["True", "False", "True", "0", "True", "False"]
