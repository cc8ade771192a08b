"""Several consumer scripts of this folder in ONE fresh process that never imports electra_tf
(one TensorFlow import for them all), each run as `python SCRIPT ARGS...` runs it.

Usage: python run_consumers.py [--not-core OPS.txt NOT_CORE.txt] -- SCRIPT ARGS... [-- SCRIPT
ARGS...]

`--not-core` first writes to NOT_CORE.txt the op names of OPS.txt (one a line) that core
TensorFlow does not register, asked before any script imports tensorflow_text (what
`serving_ops.ops_missing_from_tf_text_2_12_1`'s probe process asks). Scripts that must load
something before tensorflow_text is imported (load_hub.py) go first.
"""

import runpy
import sys

arguments = sys.argv[1:]
if arguments[:1] == ["--not-core"]:
    from tensorflow.python.framework import op_def_registry

    _, ops_path, not_core_path, *arguments = arguments
    with open(ops_path) as handle:
        names = handle.read().split()
    with open(not_core_path, "w") as handle:
        handle.write("\n".join(n for n in names if op_def_registry.get(n) is None))
    assert "tensorflow_text" not in sys.modules
assert arguments[:1] == ["--"], __doc__
runs, current = [], None
for argument in arguments:
    if argument == "--":
        current = []
        runs.append(current)
    else:
        current.append(argument)
for script, *script_arguments in runs:
    sys.argv = [script, *script_arguments]
    runpy.run_path(script, run_name="__main__")
assert "electra_tf" not in sys.modules
