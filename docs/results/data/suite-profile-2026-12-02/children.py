"""Per child process of a py-spy `--subprocesses` raw profile: seconds of samples (at RATE a
second; wall-like: a runnable thread counts) spent importing, tracing, running traced
functions, and the rest.

    python children.py RAW RATE > summary.json
"""

import collections
import json
import sys


def main(path, rate):
    parts = collections.defaultdict(collections.Counter)
    for line in open(path):
        stack, _, count = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        if len(frames) < 2 or not frames[1].startswith("process "):
            continue
        pid = frames[1].split(":")[0]
        if any("_find_and_load" in f for f in frames):
            part = "import"
        elif any("func_graph_from_py_func" in f for f in frames):
            part = "trace (TensorFlow)"
        elif any("trace_to_jaxpr" in f or "jax/_src/interpreters/pxla.py" in f for f in frames):
            part = "trace and lower (JAX)"
        elif any("quick_execute" in f for f in frames):
            part = "run traced functions"
        else:
            part = "other"
        parts[pid][part] += int(count)
    return {pid: {k: round(v / rate, 1) for k, v in c.most_common()} for pid, c in parts.items()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], float(sys.argv[2])), indent=1))
