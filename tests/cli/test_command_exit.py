"""`electra-tf` as a process: `electra_tf.cli.command` leaves the frameworks' optional
import-time probes out (`electra_tf.startup`), runs `main`, then freezes what is left for
the collector, so the interpreter's exit does not walk every object once more
(docs/results/performance.md, "Every command's exit" and "Each command's start-up")."""

import gc
import importlib.metadata
import os
import subprocess
import sys

import electra_tf.cli as cli


def test_command_starts_the_process_runs_main_then_flushes_and_freezes_and_returns_its_code(
    monkeypatch,
):
    calls = []
    monkeypatch.setattr(cli, "start_process", lambda: calls.append(("start",)))
    monkeypatch.setattr(cli, "main", lambda argv=None: calls.append(("main", argv)) or 3)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(("freeze",)))
    monkeypatch.setattr(sys.stdout, "flush", lambda: calls.append(("flush stdout",)))
    monkeypatch.setattr(sys.stderr, "flush", lambda: calls.append(("flush stderr",)))
    assert cli.command(["prepare", "--help-not"]) == 3
    assert calls == [
        ("start",),
        ("main", ["prepare", "--help-not"]),
        ("flush stdout",),
        ("flush stderr",),
        ("freeze",),
    ]


def test_main_itself_leaves_the_collector_alone(monkeypatch, capsys):
    """In a longer-lived process (this one) `main` is the call: nothing is frozen."""
    frozen = gc.get_freeze_count()
    code = cli.main(["prepare", "--input", "/nonexistent/corpus.txt", "--output-dir", "/x/y"])
    assert code == 2 and "does not exist" in capsys.readouterr().err
    assert gc.get_freeze_count() == frozen


def test_the_console_script_and_python_m_run_the_command(tmp_path):
    """The installed `electra-tf` script and `python -m electra_tf.cli` both go through
    `command`: a fresh process ends frozen (its exit handlers still run) with main's code
    and one sentence."""
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert scripts["electra-tf"].value == "electra_tf.cli:command"
    program = (
        "import atexit, gc, runpy, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count(), flush=True))\n"
        "input, output = sys.argv[1:]\n"
        "sys.argv = ['electra-tf', 'prepare', '--input', input, '--output-dir', output]\n"
        "runpy.run_module('electra_tf.cli', run_name='__main__')\n"
    )
    missing = str(tmp_path / "missing.txt")
    done = subprocess.run(
        [sys.executable, "-c", program, missing, str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"electra-tf prepare: Input path {missing} does not exist."
    )
    frozen = int(done.stdout.split("frozen ")[1].split()[0])
    assert frozen > 10_000  # every object the command left, not a handful
