"""What TF Serving's model server can run: the ops of a SavedModel against tensorflow-text 2.12.1.

TF Serving embeds tensorflow-text 2.12.1 (tensorflow/serving#2267). An op of a graph is
servable when core TensorFlow registers it or one of that version's shared libraries
names it (its op registration string), looked up in the wheel fetched from PyPI once.
"""

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path


def graph_ops(saved_model_dir) -> set:
    """Every op name in a SavedModel's graphs and functions."""
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString((Path(saved_model_dir) / "saved_model.pb").read_bytes())
    ops = set()
    for graph in proto.meta_graphs:
        ops |= {node.op for node in graph.graph_def.node}
        for function in graph.graph_def.library.function:
            ops |= {node.op for node in function.node_def}
    return ops


def tf_text_2_12_1_libraries(cache: Path) -> list[bytes]:
    """The shared libraries of the tensorflow-text 2.12.1 wheel (downloaded once to `cache`)."""
    cache.mkdir(parents=True, exist_ok=True)
    wheels = list(cache.glob("tensorflow_text-2.12.1-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(cache),
             "tensorflow-text==2.12.1", "--only-binary=:all:", "--python-version", "3.11",
             "--platform", "manylinux2014_x86_64"],
            check=True,
        )  # fmt: skip
        wheels = list(cache.glob("tensorflow_text-2.12.1-*.whl"))
    with zipfile.ZipFile(wheels[0]) as wheel:
        return [wheel.read(n) for n in wheel.namelist() if n.endswith(".so")]


def ops_missing_from_tf_text_2_12_1(folders) -> tuple[list, list, list]:
    """(ops neither core nor in tensorflow-text 2.12.1, ops not core, its libraries)."""
    ops = set().union(*(graph_ops(folder) for folder in folders))
    probe = (
        "import sys; from tensorflow.python.framework import op_def_registry as r; "
        "print('\\n'.join(n for n in sys.argv[1:] if r.get(n) is None))"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    not_core = subprocess.run(
        [sys.executable, "-c", probe, *sorted(ops)], capture_output=True, text=True, env=env,
        check=True,
    ).stdout.split()  # fmt: skip
    return ops_missing_of_not_core(not_core)


def ops_missing_of_not_core(not_core) -> tuple[list, list, list]:
    """`ops_missing_from_tf_text_2_12_1`'s answer for `not_core`, the ops core TensorFlow
    does not register as probed elsewhere (e.g. by a consumer process before it imports
    tensorflow_text): (those none of tensorflow-text 2.12.1's libraries names, `not_core`,
    the libraries)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "electra-tf-tests"
    libraries = tf_text_2_12_1_libraries(cache)
    pattern = rb"(?<![\w>])%s\x00"
    missing = [
        op
        for op in not_core
        if not any(re.search(pattern % re.escape(op.encode()), lib) for lib in libraries)
    ]
    return missing, list(not_core), libraries
