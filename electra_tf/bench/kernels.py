"""The encoder's faster kernels against Keras's own, paired step by step in one process.

    electra-tf bench kernels --recipe small --batch 32 --pairs 16
    electra-tf bench kernels --against plain-gradients

Builds the pre-training step twice on the peers' workload (`bench step`), then
times the two alternately (A B, B A, ...) so both see the same machine.
Separate processes on a noisy 2-core machine differ by more than the effect;
pairs in one process do not. The baseline (`--against`) is either

- `keras`: the step built inside `electra_tf.layers.kernels.keras_kernels()`
  (Keras's dropout, GELU, Dense and attention projections), against the step
  as shipped; or
- `plain-gradients`: our kernels with the plain feed-forward kernel gradient
  (`gradient_layout("plain")`), against the transposed forms
  (`gradient_layout("wide")`), whatever this CPU's automatic choice is.
"""

from __future__ import annotations

import contextlib
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
    against: str = "keras"  # the baseline: "keras" or "plain-gradients"
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
    if args.against == "keras":
        baseline_kernels, our_kernels = kernels.keras_kernels(), contextlib.nullcontext()
    elif args.against == "plain-gradients":
        baseline_kernels = kernels.gradient_layout("plain")
        our_kernels = kernels.gradient_layout("wide")
    else:
        raise ValueError(f"--against must be keras or plain-gradients, got {args.against!r}.")
    with baseline_kernels:
        _, _, baseline_step = build_step(options)
        baseline_step()  # traces while the baseline's kernels are in force
    with our_kernels:
        _, _, fast_step = build_step(options)
        fast_step()
    for _ in range(args.warmup):
        baseline_step()
        fast_step()
    times = {"baseline": [], "electra_tf": []}
    for i in range(args.pairs):
        order = (("baseline", baseline_step), ("electra_tf", fast_step))
        for name, step in order if i % 2 == 0 else order[::-1]:
            begin = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - begin)
    ratios = [a / b for a, b in zip(times["baseline"], times["electra_tf"], strict=True)]
    return {
        "kind": "kernels_ab",
        "recipe": args.recipe,
        "batch": args.batch,
        "seq_len": args.seq,
        "precision": args.precision,
        "against": args.against,
        "wide_gradient_layout_auto": kernels.wide_gradient_layout(),
        "pairs": args.pairs,
        "baseline_step_s_median": float(np.median(times["baseline"])),
        "electra_tf_step_s_median": float(np.median(times["electra_tf"])),
        "speedup_paired_median": float(np.median(ratios)),
        "speedup_paired_min": float(min(ratios)),
        "speedup_paired_max": float(max(ratios)),
        "peak_rss_mb_both": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "time_unix": time.time(),
    }
