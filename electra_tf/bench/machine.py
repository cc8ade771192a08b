"""What a benchmark ran on: the CPU and the libraries, as the first record of a comparison.

Ratios against a peer depend on the CPU, not only on the code: on an AMD Zen 5 core, for
example, MKL's float32 GEMM (PyTorch's) ran at about half the rate of oneDNN's
(TensorFlow's), and the same code's ratios were far above those of an earlier machine
(docs/results/finetuning.md). So every `peers.interleave` comparison starts with
`{"kind": "machine", ...}`.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata

__all__ = ["FLAGS", "LIBRARIES", "cpu", "machine"]

# The instruction sets that decide which kernels the matmul libraries pick.
FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "asimddp")
LIBRARIES = ("tensorflow", "keras", "torch", "transformers", "onnxruntime", "ai-edge-litert")


def cpu(cpuinfo: str) -> dict:
    """The first processor of a `/proc/cpuinfo` text: its name, family and model numbers,
    and which of `FLAGS` it has.

    >>> cpu("processor : 0\\nmodel name : AMD EPYC\\ncpu family : 26\\nmodel : 2\\n"
    ...     "flags : fpu avx2 avx512f avx512_bf16\\n\\nprocessor : 1\\n")
    {'name': 'AMD EPYC', 'family': 26, 'model': 2, 'flags': ['avx2', 'avx512f', 'avx512_bf16']}
    """
    fields = {}
    for line in cpuinfo.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    present = set(fields.get("flags", fields.get("Features", "")).split())

    def number(key):
        value = fields.get(key, "")
        return int(value) if value.isdigit() else None

    return {
        "name": fields.get("model name", fields.get("Hardware", platform.processor())),
        "family": number("cpu family"),
        "model": number("model"),
        "flags": [flag for flag in FLAGS if flag in present],
    }


def machine() -> dict:
    """`{"kind": "machine", "cpu": ..., "cores": ..., "versions": ...}` of this process's host."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            found = cpu(handle.read())
    except OSError:  # not Linux
        found = {"name": platform.processor() or platform.machine(), "flags": []}
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    affinity = getattr(os, "sched_getaffinity", None)
    return {
        "kind": "machine",
        "cpu": found,
        "cores": len(affinity(0)) if affinity else os.cpu_count(),
        "python": platform.python_version(),
        "versions": versions,
    }
