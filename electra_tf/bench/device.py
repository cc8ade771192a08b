"""The accelerator benchmark: our JAX step beside the PyTorch peer, on a machine without TensorFlow.

    KERAS_BACKEND=jax python -m electra_tf.bench.device --device cuda --out OUT_DIR

The lent GPU machine has JAX (CUDA), PyTorch and transformers but no TensorFlow, so this
module imports none of it: our model and step run on Keras's JAX backend, the batches are
numpy arrays (`bench.step.workload`'s ids, or a `.npz` made elsewhere with `--batches`).

It prints one JSON line per timed configuration and appends it to `OUT_DIR/device.jsonl`:

- `device_facts`: Python, the libraries, JAX's devices, `nvidia-smi`'s GPU line and the
  folder where compiled programs are kept (JAX's persistent cache, as `pretrain` keeps
  them: a second call with the same shapes reads them);
- `device_step`, per round, batch size and precision (`float32`: float32 products on
  both sides, which JAX on a GPU would otherwise run as TF32; `tf32`: float32 weights
  with TF32 products on both; `mixed_bfloat16`: Keras's policy on our side,
  `torch.autocast(bfloat16)` on the peer's): our jitted JAX step
  (`fit`'s loop, `bench.step.time_jax_fit`; `--loop train_on_batch`: a step at a time)
  and Hugging Face PyTorch ELECTRA's step on the same ids (`bench.peer_steps.torch_step`),
  in alternating order; `tokens_per_s` from each side's mean step time;
- `device_run` (with `--train-steps N`): N steps of `fit` on the `--batches` arrays in
  order, whose weights are written to `OUT_DIR/pretrainer.weights.h5` (the discriminator's
  alone to `discriminator.weights.h5`, a third of the size) with the config beside them
  (`pretrainer.json`), for the machine that has TensorFlow to load and export;
  `probe_logits` are the discriminator's logits for the first two rows, which the loaded
  weights must reproduce there.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

__all__ = ["facts", "float32_products", "main", "timed_steps", "train_run"]


def facts() -> dict:
    """What this machine has: Python, the libraries that matter here, devices, the GPU."""
    record = {"kind": "device_facts", "python": sys.version.split()[0]}
    for name in ("tensorflow", "keras", "keras_hub", "jax", "torch", "transformers"):
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:  # a finder that refuses it: as good as absent
            spec = None
        record[name] = None if spec is None else _version(name)
    import jax

    record["jax_devices"] = [str(d) for d in jax.devices()]
    try:
        query = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv"]
        record["gpu"] = subprocess.run(query, capture_output=True, text=True).stdout.strip()
    except OSError:
        record["gpu"] = None
    return record


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return "?"


def float32_products(precision: str) -> str:
    """Sets how both frameworks run float32 matrix products for `precision`; returns the
    Keras policy. "tf32" is float32 with TF32 products; every other name has exact float32
    products (JAX's GPU default is TF32, PyTorch's is not: the same setting on both)."""
    import jax

    tf32 = precision == "tf32"
    jax.config.update("jax_default_matmul_precision", "tensorfloat32" if tf32 else "highest")
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
    except ImportError:  # the JAX side alone
        pass
    return "float32" if tf32 else precision


def timed_steps(args, batch: int, precision: str, impl: str, number: int) -> dict:
    """One `device_step` record: `impl` ("electra_tf_jax" or "pytorch") timed as `bench step`."""
    from electra_tf.bench import peer_steps, step

    policy = float32_products(precision)
    options = step.StepOptions(
        recipe=args.recipe, batch=batch, seq=args.seq, precision=policy,
        warmup=args.warmup, steps=args.steps, min_steps=args.steps, budget=0.0,
        overrides=tuple(args.overrides), impl=impl, round=number,
    )  # fmt: skip
    config = step.step_config(options)
    if impl == "electra_tf_jax" and args.loop == "fit":
        timing = step.time_jax_fit(options)
    else:  # a step at a time, each ending with its loss read back
        if impl == "electra_tf_jax":
            _, one_step = step.build_jax_step(options)
        else:
            ids = step.workload(config, batch, args.seq)
            one_step, _, _ = peer_steps.torch_step(
                config.override("train.mixed_precision=float32"), ids, device=args.device,
                bf16=policy != "float32",
            )  # fmt: skip
        timing = step.time_steps(one_step, options)
        loop = "train_on_batch" if impl == "electra_tf_jax" else "step"
        timing.update(loop=loop, step_s_mean=timing["timed_s"] / timing["timed_steps"])
    return {
        "kind": "device_step", "impl": impl, "round": number, "batch": batch, "seq": args.seq,
        "precision": precision, "recipe": args.recipe, "device": args.device,
        "tokens_per_s": batch * args.seq / timing["step_s_mean"], **timing,
    }  # fmt: skip


def train_run(args) -> dict:
    """`fit` for `--train-steps` steps on the `--batches` arrays, in order; writes the weights."""
    import keras
    import numpy as np

    from electra_tf.bench.step import StepOptions, step_config
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    arrays = np.load(args.batches)
    data = {key: arrays[key].reshape(-1, arrays[key].shape[-1]) for key in arrays.files}
    length = data["token_ids"].shape[1]
    options = StepOptions(recipe=args.recipe, batch=args.train_batch, seq=length)
    config = step_config(options).override(*args.overrides, f"train.num_steps={args.train_steps}")
    float32_products("float32")  # exact products: the logits are checked on TensorFlow later
    keras.utils.set_random_seed(config.train.seed)  # the same weights from every call
    started = time.perf_counter()
    model = ElectraPretrainer(config)
    model.compile()
    count = args.train_steps * args.train_batch
    subset = {key: value[:count] for key, value in data.items()}
    history = model.fit(subset, batch_size=args.train_batch, shuffle=False, verbose=0)
    weights = os.path.join(args.out, "pretrainer.weights.h5")
    model.save_weights(weights)  # with the optimizer's moments: about 3x the discriminator's
    model.discriminator.save_weights(os.path.join(args.out, "discriminator.weights.h5"))
    with open(os.path.join(args.out, "pretrainer.json"), "w") as handle:
        handle.write(config.to_json())
    first_rows = {key: value[:2] for key, value in data.items()}
    probe = keras.ops.convert_to_numpy(model.discriminator(first_rows, training=False))
    return {
        "kind": "device_run", "backend": keras.config.backend(),
        "steps": int(model.optimizer.iterations.numpy()),
        "last_step_loss": float(history.history["step_loss"][-1]),
        "seconds": time.perf_counter() - started, "weights": os.path.basename(weights),
        "discriminator_weights": "discriminator.weights.h5",
        "probe_logits": probe.astype("float64").round(6).tolist(),
    }  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m electra_tf.bench.device", description=__doc__)
    parser.add_argument("--out", required=True, help="folder for device.jsonl and the weights")
    parser.add_argument("--device", default="cuda", help="the PyTorch peer's device (cuda, cpu)")
    parser.add_argument("--recipe", default="small", help="pre-training recipe (default small)")
    parser.add_argument("--seq", type=int, default=128, help="sequence length (default 128)")
    parser.add_argument("--batch-sizes", default="32,128", help="comma-separated (default 32,128)")
    parser.add_argument(
        "--precisions",
        default="float32,mixed_bfloat16",
        help="comma-separated: float32, tf32, "
        "mixed_bfloat16 (float32 products exact on both sides unless tf32)",
    )
    parser.add_argument(
        "--loop", choices=("fit", "train_on_batch"), default="fit",
        help="how ours is timed: fit (the variables stay on the device, as users train; "
        "the default) or train_on_batch (every variable written back after each step)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps (default 5)")
    parser.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    parser.add_argument("--batches", default="", help=".npz of [steps, batch, seq] id arrays")
    parser.add_argument("--train-steps", type=int, default=0, help="steps of the short run")
    parser.add_argument("--train-batch", type=int, default=32, help="the short run's batch")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="override")
    return parser


def main(argv=None) -> int:
    """Runs what the flags ask, printing and appending each record as it ends."""
    args = _parser().parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    def keep(record):
        line = json.dumps(record, sort_keys=True)
        print(line, flush=True)
        with open(os.path.join(args.out, "device.jsonl"), "a") as handle:
            handle.write(line + "\n")

    from electra_tf.ops.backend import jax_compile_cache

    keep(dict(facts(), compile_cache=jax_compile_cache()))  # as `pretrain` keeps them
    impls = ["electra_tf_jax", "pytorch"]
    for number in range(1, args.rounds + 1):
        for batch in [int(b) for b in args.batch_sizes.split(",") if b]:
            for precision in [p for p in args.precisions.split(",") if p]:
                for impl in impls if number % 2 else impls[::-1]:
                    try:
                        keep(timed_steps(args, batch, precision, impl, number))
                    except Exception as error:  # noqa: BLE001 - one failure must not end the call
                        said = f"{type(error).__name__}: {error}"
                        keep({"kind": "device_error", "impl": impl, "batch": batch,
                              "precision": precision, "error": said})  # fmt: skip
    if args.train_steps:
        keep(train_run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
