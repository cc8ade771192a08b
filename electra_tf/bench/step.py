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

`--impl model_garden` or `--impl pytorch` times a peer's step instead, built from
the same config on the same ids (`peer_steps`); `bench peers` interleaves them.
`--impl electra_tf_jax` times our same model and step on Keras's JAX backend (run
with `KERAS_BACKEND=jax`; `bench peers` sets it): the whole step jitted, as `fit`
runs it there, fed the same ids as numpy arrays.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import resource
import time

__all__ = [
    "BACKENDS",
    "IMPLEMENTATIONS",
    "StepOptions",
    "build_step",
    "build_jax_step",
    "run",
    "step_config",
    "workload",
]

FIRST_REGULAR_ID = 999  # BERT uncased: ids below are special or [unusedN]
#: What `--impl` times: ours, Model Garden's `ElectraPretrainer`, Hugging Face PyTorch.
IMPLEMENTATIONS = ("electra_tf", "electra_tf_jax", "model_garden", "pytorch")
#: The Keras backend each implementation needs in its process (`bench peers` sets it).
BACKENDS = {"electra_tf_jax": "jax"}


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
    impl: str = "electra_tf"  # or a peer on the same workload: model_garden, pytorch


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


def step_config(args: StepOptions):
    """The recipe with the benchmark's batch, length and precision (no warm-up of the rate)."""
    from electra_tf.config import load_recipe

    overrides = [
        f"train.batch_size={args.batch}",
        f"data.sequence_length={args.seq}",
        "train.warmup_steps=0",
        f"train.mixed_precision={args.precision}",
        *args.overrides,
    ]
    return load_recipe(args.recipe).override(*overrides)


def workload(config, batch: int, seq: int, count: int = 4, seed: int = 1234):
    """`count` int32 `[batch, seq]` arrays: uniform ids in [999, vocabulary), [CLS] ... [SEP].

    Every implementation `bench step` times (ours and the peers) reads these same ids.
    """
    import numpy as np

    rng = np.random.RandomState(seed)
    arrays = []
    for _ in range(count):
        ids = rng.randint(FIRST_REGULAR_ID, config.model.vocabulary_size, size=(batch, seq))
        ids = ids.astype("int32")
        ids[:, 0], ids[:, -1] = config.data.cls_id, config.data.sep_id
        arrays.append(ids)
    return arrays


def build_step(args: StepOptions):
    """(config, compiled pretrainer, a function running one traced step and returning its loss).

    The function's `graph()` gives the traced step's graph (`bench floor` reads its matmuls).

    The batches are the peers' workload (`workload`), cycled.
    """
    import tensorflow as tf

    from electra_tf.pretraining.distribute import exact_gradient_sums
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    config = step_config(args)
    batches = [
        {
            "token_ids": tf.constant(ids),
            "padding_mask": tf.ones_like(ids),
            "segment_ids": tf.zeros_like(ids),
        }
        for ids in workload(config, args.batch, args.seq)
    ]
    model = ElectraPretrainer(config)
    model.compile(jit_compile=args.xla)
    exact_gradient_sums()  # as `fit` traces it
    step_function = tf.function(model.train_step, reduce_retracing=True)
    counter = [0]

    def one_step():
        logs = step_function(batches[counter[0] % len(batches)])
        counter[0] += 1
        return float(logs["loss"])

    one_step.graph = lambda: step_function.get_concrete_function(batches[0]).graph
    return config, model, one_step


def _inputs(ids):
    """The model's inputs for `workload` ids: every token real, one segment."""
    import numpy as np

    return {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}


def _refuse_off_jax(args: StepOptions) -> None:
    """One sentence when our JAX step is asked for outside the JAX backend, or with --xla."""
    import keras

    from electra_tf.config import ConfigError

    if keras.config.backend() != "jax":
        raise ConfigError(
            f"bench step --impl electra_tf_jax needs KERAS_BACKEND=jax (this process runs "
            f"{keras.config.backend()!r}); set it, or run it through `bench peers`."
        )
    if args.xla:
        raise ConfigError("bench step --impl electra_tf_jax is always jitted; drop --xla.")


def build_jax_step(args: StepOptions):
    """(model, one step) of our step on Keras's JAX backend: `train_on_batch`, which runs
    the jitted stateless step (`pretraining.portable_step`), on `workload`'s ids, cycled."""

    import keras

    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    _refuse_off_jax(args)
    config = step_config(args)
    keras.utils.set_random_seed(config.train.seed)  # the same weights and masks every call
    batches = [_inputs(ids) for ids in workload(config, args.batch, args.seq)]
    model = ElectraPretrainer(config)
    model.compile()
    counter = [0]

    def one_step():
        logs = model.train_on_batch(batches[counter[0] % len(batches)], return_dict=True)
        counter[0] += 1
        return float(logs["loss"])

    return model, one_step


def time_jax_fit(args: StepOptions) -> dict:
    """Our JAX step as `fit` runs it, on `workload`'s ids: one `fit` of `warmup` steps (the
    compile), then one of `steps` steps, timed whole. `fit` keeps the model's and Adam's
    variables on the device from step to step and writes them back once at its end;
    `train_on_batch` (`build_jax_step`) writes every variable back after each step, a fixed
    cost per step that a fast accelerator shows. The time ends when the step count written
    by the last step is read back, so the device has finished every step."""
    import keras
    import numpy as np

    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    _refuse_off_jax(args)
    config = step_config(args)
    ids = workload(config, args.batch, args.seq)

    def rows(count):
        return _inputs(np.concatenate([ids[k % len(ids)] for k in range(count)]))

    model = ElectraPretrainer(config)
    model.compile()

    def fit(count):
        start = time.perf_counter()
        history = model.fit(rows(count), batch_size=args.batch, shuffle=False, verbose=0)
        int(keras.ops.convert_to_numpy(model.optimizer.iterations))  # waits for the last step
        return time.perf_counter() - start, history.history

    first, _ = fit(max(1, args.warmup))
    cpu0 = _cpu_seconds()
    seconds, history = fit(args.steps)
    return {
        "step_s_mean": seconds / args.steps,
        "first_step_s": first,
        "timed_steps": args.steps,
        "timed_s": seconds,
        "cpu_util": (_cpu_seconds() - cpu0) / seconds,
        "loss_mean": float(history["loss"][-1]),
        "loop": "fit",
    }


def time_steps(one_step, args: StepOptions) -> dict:
    """Times `one_step` (which blocks and returns the loss) as the module docstring says."""
    import numpy as np

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
    return {
        "step_s_median": float(np.median(times)),
        "step_s_min": float(min(times)),
        "step_s_max": float(max(times)),
        "first_step_s": first,
        "timed_steps": len(times),
        "timed_s": wall,
        "cpu_util": cpu / wall,
        "other_busy_cpus": other,
        "loss_last": losses[-1],
        "loss_mean": float(np.mean(losses)),
    }


def _implementation(args: StepOptions, config):
    """(peer name, variant, one_step, trainable parameters, versions) of `args.impl`."""
    if args.impl == "electra_tf":
        import numpy as np
        import tensorflow as tf

        _, model, one_step = build_step(args)
        variant = ("xla" if args.xla else "graph") + {
            "float32": "",
            "mixed_bfloat16": "-bf16",
            "mixed_float16": "-fp16",
        }[args.precision]
        params = int(sum(np.prod(v.shape) for v in model.trainable_variables))
        return "C_electra_tf", variant, one_step, params, {"tensorflow": tf.__version__}
    if args.impl == "electra_tf_jax":
        import jax
        import numpy as np

        model, one_step = build_jax_step(args)
        params = int(sum(np.prod(v.shape) for v in model.trainable_variables))
        variant = (
            "jit"
            + {"float32": "", "mixed_bfloat16": "-bf16", "mixed_float16": "-fp16"}[args.precision]
        )
        return "C_electra_tf_jax", variant, one_step, params, {"jax": jax.__version__}
    from electra_tf.bench import peer_steps
    from electra_tf.config import ConfigError

    if args.precision != "float32":
        raise ConfigError(f"bench step --impl {args.impl} runs float32 only; drop --precision.")
    batches = workload(config, args.batch, args.seq)
    if args.impl == "model_garden":
        one_step, params, versions = peer_steps.model_garden_step(config, batches, xla=args.xla)
        return "A_tf_model_garden", "xla" if args.xla else "graph", one_step, params, versions
    if args.impl == "pytorch":
        if args.xla:
            raise ConfigError("bench step --impl pytorch has no --xla; drop it.")
        one_step, params, versions = peer_steps.torch_step(config, batches)
        versions["optimizer"] = peer_steps.TORCH_OPTIMIZER
        return "B_hf_torch", "lm_gather+cdf", one_step, params, versions
    choices = ", ".join(IMPLEMENTATIONS)
    raise ConfigError(f"bench step --impl must be one of {choices}, got {args.impl!r}.")


def run(args: StepOptions) -> dict:
    """Times the step; returns the JSON record (see the module docstring)."""
    from electra_tf.pretraining.flops import matmul_step_flops

    config = step_config(args)
    peer, variant, one_step, params, versions = _implementation(args, config)
    timing = time_steps(one_step, args)
    steps_per_s = timing["timed_steps"] / timing["timed_s"]
    flops = matmul_step_flops(config, args.batch)["step"]
    return {
        "kind": "peer_step",
        "peer": peer,
        "variant": variant,
        "impl": args.impl,
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
        **timing,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "params_total": params,
        "python": platform.python_version(),
        **versions,
        "nproc": os.cpu_count(),
        "time_unix": time.time(),
    }
