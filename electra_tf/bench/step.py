"""Times one ELECTRA pre-training step and prints one JSON line.

    electra-tf bench step --recipe small --batch 32

The batch is uniform random ids in [999, vocabulary) with [CLS] first and
[SEP] last (seed 1234, 4 distinct batches cycled), the workload of the peer
benchmarks (Model Garden, Hugging Face). The step is `ElectraPretrainer.train_step`
in a `tf.function`, as `fit` runs it: masking, generator, sampling,
discriminator, backward and the AdamW update. The first warm-up step is timed
on its own (tracing, XLA compilation); then steps are timed until `--steps`
or `--budget` seconds. FLOPs are matmul FLOPs (2*m*n*k, step = 3 x forward,
vocabulary projection at the masked positions), as the peers count them.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import resource
import time

__all__ = ["StepOptions", "build_step", "run"]

FIRST_REGULAR_ID = 999  # BERT uncased: ids below are special or [unusedN]


@dataclasses.dataclass
class StepOptions:
    """What `electra-tf bench step` times (its flags, one field each)."""

    recipe: str = "small"
    batch: int = 32
    seq: int = 128
    xla: bool = False
    precision: str = "float32"
    warmup: int = 3  # the first warm-up step is timed alone
    steps: int = 20  # most timed steps
    min_steps: int = 5  # fewest timed steps
    budget: float = 60.0  # stop timing after this many seconds
    round: int = 0  # echoed in the output
    overrides: tuple = ()


def _busy_jiffies():
    try:
        with open("/proc/stat") as handle:
            values = [int(x) for x in handle.readline().split()[1:]]
    except OSError:
        return None
    return values[0] + values[1] + values[2] + values[5] + values[6], sum(values[:8])


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build_step(args: StepOptions):
    """(config, compiled pretrainer, a function running one traced step and returning its loss).

    The function's `graph()` gives the traced step's graph (`bench floor` reads its matmuls).

    The batches are the peers' workload (see the module docstring), cycled.
    """
    import numpy as np
    import tensorflow as tf

    from electra_tf.config import load_recipe
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    overrides = [
        f"train.batch_size={args.batch}",
        f"data.sequence_length={args.seq}",
        "train.warmup_steps=0",
        f"train.mixed_precision={args.precision}",
        *args.overrides,
    ]
    config = load_recipe(args.recipe).override(*overrides)
    vocabulary = config.model.vocabulary_size
    rng = np.random.RandomState(1234)
    batches = []
    for _ in range(4):
        ids = rng.randint(FIRST_REGULAR_ID, vocabulary, size=(args.batch, args.seq)).astype("int32")
        ids[:, 0], ids[:, -1] = config.data.cls_id, config.data.sep_id
        batches.append(
            {
                "token_ids": tf.constant(ids),
                "padding_mask": tf.ones_like(ids),
                "segment_ids": tf.zeros_like(ids),
            }
        )
    model = ElectraPretrainer(config)
    model.compile(jit_compile=args.xla)
    step_function = tf.function(model.train_step, reduce_retracing=True)
    counter = [0]

    def one_step():
        logs = step_function(batches[counter[0] % len(batches)])
        counter[0] += 1
        return float(logs["loss"])

    one_step.graph = lambda: step_function.get_concrete_function(batches[0]).graph
    return config, model, one_step


def run(args: StepOptions) -> dict:
    """Times the step; returns the JSON record (see the module docstring)."""
    import numpy as np
    import tensorflow as tf

    from electra_tf.pretraining.flops import matmul_step_flops

    config, model, one_step = build_step(args)
    start = time.perf_counter()
    one_step()
    first = time.perf_counter() - start
    for _ in range(max(0, args.warmup - 1)):
        one_step()
    times, losses = [], []
    stat0, cpu0, t0 = _busy_jiffies(), _cpu_seconds(), time.perf_counter()
    while True:
        begin = time.perf_counter()
        losses.append(one_step())
        times.append(time.perf_counter() - begin)
        elapsed = time.perf_counter() - t0
        if len(times) >= args.steps or (len(times) >= args.min_steps and elapsed >= args.budget):
            break
    wall = time.perf_counter() - t0
    stat1, cpu = _busy_jiffies(), _cpu_seconds() - cpu0
    other = None
    if stat0 and stat1 and stat1[1] > stat0[1]:
        busy = (os.cpu_count() or 1) * (stat1[0] - stat0[0]) / (stat1[1] - stat0[1])
        other = max(0.0, busy - cpu / wall)
    steps_per_s = len(times) / wall
    flops = matmul_step_flops(config, args.batch)["step"]
    variant = ("xla" if args.xla else "graph") + ("" if args.precision == "float32" else "-bf16")
    if args.precision == "mixed_float16":
        variant = variant.replace("bf16", "fp16")
    record = {
        "kind": "peer_step",
        "peer": "C_electra_tf",
        "variant": variant,
        "batch": args.batch,
        "seq_len": args.seq,
        "round": args.round,
        "recipe": args.recipe,
        "precision": args.precision,
        "onednn_enabled": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
        "steps_per_s": steps_per_s,
        "tokens_per_s": steps_per_s * args.batch * args.seq,
        "model_flops_per_step": flops,
        "impl_flops_per_step": flops,
        "model_gflops_per_s": flops * steps_per_s / 1e9,
        "impl_gflops_per_s": flops * steps_per_s / 1e9,
        "step_s_median": float(np.median(times)),
        "step_s_min": float(min(times)),
        "step_s_max": float(max(times)),
        "first_step_s": first,
        "timed_steps": len(times),
        "timed_s": wall,
        "cpu_util": cpu / wall,
        "other_busy_cpus": other,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "loss_last": losses[-1],
        "loss_mean": float(np.mean(losses)),
        "params_total": int(sum(np.prod(v.shape) for v in model.trainable_variables)),
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "nproc": os.cpu_count(),
        "time_unix": time.time(),
    }
    return record
