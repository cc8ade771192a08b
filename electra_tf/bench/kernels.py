"""The encoder's faster kernels against Keras's own, paired step by step in one process.

    electra-tf bench kernels --recipe small --batch 32 --pairs 16

Builds the pre-training step twice on the peers' workload (`bench step`): once
inside `electra_tf.layers.kernels.keras_kernels()` (Keras's dropout, GELU and
attention projections) and once as shipped, then times the two alternately
(A B, B A, ...) so both see the same machine. Separate processes on a noisy
2-core machine differ by more than the effect; pairs in one process do not.
"""

from __future__ import annotations

import dataclasses
import resource
import time

__all__ = ["KernelsOptions", "run"]


@dataclasses.dataclass
class KernelsOptions:
    """What `electra-tf bench kernels` times (its flags, one field each)."""

    recipe: str = "small"
    batch: int = 32
    seq: int = 128
    precision: str = "float32"
    pairs: int = 16  # timed steps of each, alternating
    warmup: int = 2  # untimed steps of each after the first
    overrides: tuple = ()


def run(args: KernelsOptions) -> dict:
    """Times the pairs; returns the JSON record (see the module docstring)."""
    import numpy as np

    from electra_tf.bench.step import StepOptions, build_step
    from electra_tf.layers import kernels

    options = StepOptions(
        recipe=args.recipe,
        batch=args.batch,
        seq=args.seq,
        precision=args.precision,
        overrides=tuple(args.overrides),
    )
    with kernels.keras_kernels():
        _, _, keras_step = build_step(options)
        keras_step()  # traces while Keras's kernels are in force
    _, _, fast_step = build_step(options)
    fast_step()
    for _ in range(args.warmup):
        keras_step()
        fast_step()
    times = {"keras": [], "electra_tf": []}
    for i in range(args.pairs):
        order = (("keras", keras_step), ("electra_tf", fast_step))
        for name, step in order if i % 2 == 0 else order[::-1]:
            begin = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - begin)
    ratios = [a / b for a, b in zip(times["keras"], times["electra_tf"], strict=True)]
    return {
        "kind": "kernels_ab",
        "recipe": args.recipe,
        "batch": args.batch,
        "seq_len": args.seq,
        "precision": args.precision,
        "pairs": args.pairs,
        "keras_step_s_median": float(np.median(times["keras"])),
        "electra_tf_step_s_median": float(np.median(times["electra_tf"])),
        "speedup_paired_median": float(np.median(ratios)),
        "speedup_paired_min": float(min(ratios)),
        "speedup_paired_max": float(max(ratios)),
        "peak_rss_mb_both": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "time_unix": time.time(),
    }
