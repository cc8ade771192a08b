"""How often TensorFlow's oneDNN batched matmul crashes a process, by operand shapes.

Each case runs in N fresh processes: 300 products of random float32 operands of the given
shapes (`tf.matmul`), then every malloc arena consolidated (a corrupted heap aborts there).
One JSON line per case: shapes, ISA cap, runs, crashed, exit codes.

Usage: python probe.py [RUNS] > results.jsonl   (from the clone's root, its venv active)
"""

import json
import os
import subprocess
import sys

CHILD = """
import ctypes, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
a, b = eval(sys.argv[1]), eval(sys.argv[2])
for _ in range(300):
    tf.matmul(tf.random.normal(a), tf.random.normal(b))
ctypes.CDLL("libc.so.6").malloc_trim(0)
"""

CASES = [  # (lhs, rhs, oneDNN ISA cap or "" for the CPU's best)
    ([2, 1, 32, 16], [16, 1], ""),  # the joint QA head with beam_size=1: [W, 1, L, H] @ [H, 1]
    ([2, 1, 32, 16], [16, 16], ""),
    ([13, 1, 3, 4], [4, 16], ""),  # tensorflow/tensorflow#117700's case
    ([13, 1, 3, 4], [1, 4, 16], ""),
    ([2, 1, 32, 16], [16, 1], "AVX2"),  # the same product, oneDNN held to AVX2
    ([2, 1, 32, 16], [16, 1], "AVX512_CORE"),
    ([13, 1, 1, 4], [4, 16], ""),  # M = 1
    ([1, 13, 3, 4], [4, 16], ""),  # the size-1 dimension first
    ([13, 2, 3, 4], [4, 16], ""),  # no size-1 dimension
    ([64, 6, 24, 16], [16, 1], ""),  # the joint head with the tests' beam of 6
    ([64, 24, 16], [16, 1], ""),  # rank 3 by a 2-D kernel
    ([13, 1, 3, 4], [13, 1, 4, 16], ""),  # no broadcast
]


def main(runs=3):
    for lhs, rhs, isa in CASES:
        env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1")
        if isa:
            env["ONEDNN_MAX_CPU_ISA"] = isa
        codes = [
            subprocess.run([sys.executable, "-c", CHILD, str(lhs), str(rhs)], env=env,
                           capture_output=True).returncode  # fmt: skip
            for _ in range(runs)
        ]
        record = {"lhs": lhs, "rhs": rhs, "isa_cap": isa or "none", "runs": runs,
                  "crashed": sum(c != 0 for c in codes), "exit_codes": codes}  # fmt: skip
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
