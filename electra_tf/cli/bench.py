"""`electra-tf bench step|peers|profile|floor|kernels|precision|input|serving|...`: JSON lines."""

from __future__ import annotations

import dataclasses
import json

from electra_tf.bench.task_serving import add_arguments as task_serving_arguments
from electra_tf.cli.common import add_overrides

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="time the pre-training step, the input pipeline or serving (JSON lines)",
        description="Benchmarks that print JSON lines, to compare with peers run in the same "
        "session: `step` (one pre-training step, as the peers' benchmarks count it), `peers` "
        "(that step against Model Garden's and Hugging Face PyTorch's, interleaved), `profile` "
        "(its op-level time), `floor` (its matmuls timed alone, the floor the step sits above), "
        "`kernels` (the encoder's faster kernels against Keras's own, paired in one process), "
        "`precision` (loss curves of a precision against float32's seeds), `input` "
        "(the input pipeline against the step's consumption), `serving` (the exported "
        "SavedModel beside Keras and Hugging Face PyTorch) and `prepare` (corpus preparation "
        "with 1 and N workers beside tokenizers alone) and `finetune` (fine-tuning and "
        "prediction on real text beside a PyTorch loop, keras-hub and transformers' pipeline), "
        "`qa` (the same for question answering on SQuAD-format files).",
    )
    which = parser.add_subparsers(
        dest="benchmark",
        metavar="BENCHMARK",
        help="step, peers, profile, floor, kernels, precision, input, serving, prepare, "
        "finetune or qa",
    )
    which.required = True
    _add_step(which)
    _add_peers(which)
    _add_profile(which)
    _add_floor(which)
    _add_kernels(which)
    _add_precision(which)
    _add_input(which)
    _add_serving(which)
    _add_prepare(which)
    _add_finetune(which)
    _add_qa(which)


def _print(record) -> None:
    print(json.dumps(record, sort_keys=True), flush=True)


def _options(cls, args, **values):
    """`cls` (a benchmark's options dataclass) from the flags of the same names; `values`
    (flags that need converting) take precedence."""
    names = [f.name for f in dataclasses.fields(cls)]
    flags = {name: getattr(args, name) for name in names if hasattr(args, name)}
    if "overrides" in names:
        flags["overrides"] = tuple(args.overrides)
    return cls(**{**flags, **values})


def _add_shape_flags(parser) -> None:
    """The pre-training step's recipe and shape (`step`, `profile` and `floor`)."""
    parser.add_argument("--recipe", default="small", help="pre-training recipe (default small)")
    parser.add_argument("--batch", type=int, default=32, help="global batch size (default 32)")
    parser.add_argument("--seq", type=int, default=128, help="sequence length (default 128)")


def _add_model_flags(parser) -> None:
    """The pre-training step's recipe, shape, XLA and precision (`step` and `profile`)."""
    _add_shape_flags(parser)
    parser.add_argument("--xla", action="store_true", help="XLA-compile the two passes")
    parser.add_argument(
        "--precision",
        default="float32",
        choices=["float32", "mixed_bfloat16", "mixed_float16"],
        help="compute precision (default float32)",
    )


def _add_timing_flags(parser, budget: float) -> None:
    """How each step run is timed (`step`, and every run of `peers`)."""
    parser.add_argument(
        "--warmup", type=int, default=3, help="warm-up steps, the first timed alone"
    )
    parser.add_argument("--steps", type=int, default=20, help="most timed steps (default 20)")
    parser.add_argument("--min-steps", type=int, default=5, help="fewest timed steps (default 5)")
    parser.add_argument(
        "--budget",
        type=float,
        default=budget,
        help=f"stop timing after this many seconds (default {budget:g})",
    )


def _add_step(which) -> None:
    parser = which.add_parser("step", help="one pre-training step (tokens/s, GFLOP/s, memory)")
    _add_model_flags(parser)
    _add_timing_flags(parser, budget=60.0)
    parser.add_argument("--round", type=int, default=0, help="round number, echoed in the output")
    parser.add_argument(
        "--impl",
        default="electra_tf",
        choices=["electra_tf", "electra_tf_jax", "model_garden", "pytorch"],
        help="whose step: ours (default; electra_tf_jax: ours on Keras's JAX backend, run "
        "with KERAS_BACKEND=jax), Model Garden's or Hugging Face PyTorch's, on the same "
        "workload and config",
    )
    add_overrides(parser, "config override (repeatable)")
    parser.set_defaults(handler=_step)


def _step(args) -> int:
    from electra_tf.bench.step import StepOptions, run

    _print(run(_options(StepOptions, args)))
    return 0


def _add_peers(which) -> None:
    parser = which.add_parser(
        "peers", help="the step against Model Garden's and PyTorch's, interleaved rounds"
    )
    _add_shape_flags(parser)
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument(
        "--impls",
        nargs="+",
        default=["model_garden", "pytorch", "electra_tf"],
        choices=["electra_tf", "electra_tf_jax", "model_garden", "pytorch"],
        help="implementations in a round's order, reversed in even rounds (default all three)",
    )
    _add_timing_flags(parser, budget=45.0)
    parser.add_argument(
        "--no-ceiling", dest="ceiling", action="store_false", help="skip the matmul ceiling"
    )
    parser.add_argument("--out", default="", help="JSON-lines file each run is appended to")
    add_overrides(parser, "config override (repeatable)")
    parser.set_defaults(handler=_peers)


def _peers(args) -> int:
    import sys

    from electra_tf.bench.peers import PeersOptions, run, table

    records = run(_options(PeersOptions, args, impls=tuple(args.impls)), emit=_print)
    print(table([r for r in records if r["kind"] == "peers_summary"]), file=sys.stderr)
    return 0


def _add_profile(which) -> None:
    parser = which.add_parser("profile", help="op-level time of the pre-training step")
    _add_model_flags(parser)
    parser.add_argument("--warmup", type=int, default=3, help="steps before recording (default 3)")
    parser.add_argument("--steps", type=int, default=5, help="steps recorded (default 5)")
    parser.add_argument("--top", type=int, default=25, help="op types listed (default 25)")
    add_overrides(parser, "config override (repeatable)")
    parser.set_defaults(handler=_profile)


def _profile(args) -> int:
    from electra_tf.bench.profile import ProfileOptions, run

    _print(run(_options(ProfileOptions, args)))
    return 0


def _add_floor(which) -> None:
    parser = which.add_parser(
        "floor", help="the step's matmuls timed alone: the floor the step sits above"
    )
    _add_shape_flags(parser)
    parser.add_argument("--chain", type=int, default=6, help="copies per timed call (default 6)")
    parser.add_argument("--repeats", type=int, default=15, help="timed calls each (default 15)")
    parser.add_argument("--steps", type=int, default=5, help="whole steps timed (default 5)")
    parser.add_argument("--top", type=int, default=12, help="products listed (default 12)")
    add_overrides(parser, "config override (repeatable)")
    parser.set_defaults(handler=_floor)


def _floor(args) -> int:
    from electra_tf.bench.floor import FloorOptions, run

    _print(run(_options(FloorOptions, args)))
    return 0


def _add_kernels(which) -> None:
    parser = which.add_parser(
        "kernels", help="the step with the encoder's kernels against Keras's own, paired"
    )
    _add_model_flags(parser)
    parser.add_argument(
        "--against",
        choices=["keras", "plain-gradients"],
        default="keras",
        help="baseline: Keras's kernels (default), or ours with the plain kernel gradients",
    )
    parser.add_argument("--pairs", type=int, default=16, help="timed steps of each (default 16)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps of each (default 2)")
    add_overrides(parser, "config override (repeatable)")
    parser.set_defaults(handler=_kernels)


def _kernels(args) -> int:
    from electra_tf.bench.kernels import KernelsOptions, run

    if args.xla:
        raise SystemExit("bench kernels: --xla is not supported (XLA fuses these kernels itself).")
    _print(run(_options(KernelsOptions, args)))
    return 0


def _add_precision(which) -> None:
    parser = which.add_parser(
        "precision", help="loss curves of a compute precision against float32's seeds"
    )
    parser.add_argument("--data", required=True, help="a folder written by `electra-tf prepare`")
    parser.add_argument("--recipe", default="tiny", help="pre-training recipe (default tiny)")
    parser.add_argument("--steps", type=int, default=200, help="steps per run (default 200)")
    parser.add_argument("--every", type=int, default=10, help="logging window (default 10)")
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (default 1,2,3)")
    parser.add_argument(
        "--precisions",
        default="float32,mixed_bfloat16",
        help="comma-separated precisions, float32 included (default float32,mixed_bfloat16)",
    )
    parser.add_argument("--metric", default="loss", help="logged scalar compared (default loss)")
    add_overrides(parser, "config override (repeatable)")
    parser.set_defaults(handler=_precision)


def _precision(args) -> int:
    from electra_tf.bench.precision import PrecisionOptions, run

    options = _options(
        PrecisionOptions,
        args,
        seeds=tuple(int(s) for s in args.seeds.split(",") if s.strip()),
        precisions=tuple(p.strip() for p in args.precisions.split(",") if p.strip()),
    )
    run(options, emit=_print)
    return 0


def _add_input(which) -> None:
    parser = which.add_parser("input", help="the input pipeline against the step's consumption")
    parser.add_argument("--recipe", default="small", help="recipe whose step is the consumer")
    parser.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    parser.add_argument("--seq", type=int, default=128, help="sequence length (default 128)")
    parser.add_argument("--data", help="a prepare folder to read instead of written examples")
    parser.add_argument("--examples", type=int, default=20000, help="examples written")
    parser.add_argument("--budget", type=float, default=5.0, help="seconds per timing")
    parser.add_argument("--repeats", type=int, default=3, help="timings (median reported)")
    parser.add_argument(
        "--model-steps-per-second", type=float, help="skip timing the step; use this rate"
    )
    parser.add_argument("--model-steps", type=int, default=8, help="steps timed for the model")
    parser.set_defaults(handler=_input)


def _input(args) -> int:
    from electra_tf.bench.input import InputOptions, run

    _print(run(_options(InputOptions, args, data=args.data or "")))
    return 0


def _add_serving(which) -> None:
    parser = which.add_parser("serving", help="serving latency and throughput, beside peers")
    parser.add_argument("--recipe", default="small", help="model size (default small)")
    parser.add_argument(
        "--batches", type=int, nargs="+", default=[1, 32], help="batch sizes (default 1 32)"
    )
    parser.add_argument("--seq", type=int, default=128, help="sequence length (default 128)")
    parser.add_argument(
        "--iterations",
        type=int,
        default=100,
        help="timed calls at batch 1 (30%% of it at larger batches; default 100)",
    )
    parser.add_argument("--min-iterations", type=int, default=10, help="fewest timed calls")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (default 5)")
    add_overrides(parser, "config override of the recipe's model (repeatable)")
    task_serving_arguments(parser)  # --run RUN: a fine-tuned classifier beside ONNX Runtime
    parser.set_defaults(handler=_serving)


def _serving(args) -> int:
    from electra_tf.bench import serving, task_serving

    if args.run:  # a fine-tuned classifier, raw text, beside ONNX Runtime
        task_serving.run_from_args(args, emit=_print)
    else:
        serving.run(_options(serving.ServingOptions, args, batches=tuple(args.batches)), _print)
    return 0


def _add_prepare(which) -> None:
    parser = which.add_parser(
        "prepare", help="prepare's tokens/s with 1 and N workers beside tokenizers alone"
    )
    parser.add_argument("--megabytes", type=float, default=64.0, help="corpus text (default 64)")
    parser.add_argument("--workers", type=int, default=0, help="N (default: available cores)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--cache-dir", default="data", help="fetch and build here (default data)")
    parser.add_argument("--vocab-file", default="", help="default: BERT's uncased vocabulary")
    parser.add_argument(
        "--peer-megabytes",
        type=float,
        default=4.0,
        help="text the reference's Python FullTokenizer is timed on (default 4)",
    )
    parser.add_argument(
        "--runner", choices=["local", "beam"], default="local",
        help="beam: also time prepare --runner beam (Beam's local runner) at 1 and N workers "
        "and its fixed cost on a tiny input",
    )  # fmt: skip
    parser.set_defaults(handler=_prepare)


def _prepare(args) -> int:
    from electra_tf.bench.prepare import PrepareBenchOptions, run

    run(_options(PrepareBenchOptions, args), emit=_print)
    return 0


def _add_finetune(which) -> None:
    parser = which.add_parser(
        "finetune",
        help="fine-tuning and predict speed on real text beside PyTorch, keras-hub, a pipeline",
    )
    parser.add_argument(
        "--impl", help="one run of this implementation in this process (default: compare all)"
    )
    parser.add_argument(
        "--impls", default="", help="compared, comma-separated (default: all for --mode)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--out", default="", help="append every record to this JSON-lines file")
    parser.add_argument("--task", default="reviews", choices=["reviews", "long"], help="workload")
    parser.add_argument(
        "--mode", default="train", choices=["train", "predict"], help="what to time"
    )
    parser.add_argument("--data-dir", default="data", help="download cache (default data)")
    parser.add_argument("--train-examples", type=int, default=700, help="default 700")
    parser.add_argument("--dev-examples", type=int, default=300, help="default 300")
    parser.add_argument("--predict-examples", type=int, default=1000, help="default 1000")
    parser.add_argument("--epochs", type=int, default=3, help="default 3")
    parser.add_argument("--batch", type=int, default=32, help="default 32")
    parser.add_argument("--seq", type=int, default=128, help="maximum length (default 128)")
    parser.add_argument("--learning-rate", type=float, default=5e-5, help="default 5e-5")
    parser.add_argument("--weight-decay", type=float, default=0.01, help="default 0.01")
    parser.add_argument("--seed", type=int, default=1, help="round r runs seed + r - 1 (1)")
    parser.add_argument(
        "--score-test", type=_yes_no, default=False,
        help="true: also score the test split at the epoch chosen on dev (reviews)",
    )  # fmt: skip
    parser.add_argument(
        "--batches", default="random", choices=["random", "ours"],
        help="pytorch's batches: random (shuffled) or ours (electra_tf's, padded alike)",
    )  # fmt: skip
    parser.add_argument("--round", type=int, default=0, help="round number (set by the runner)")
    parser.set_defaults(handler=_finetune)


def _yes_no(text: str) -> bool:
    return str(text).lower() in ("1", "true", "yes")


def _finetune(args) -> int:
    from electra_tf.bench import finetune

    options = _options(finetune.FinetuneBenchOptions, args, impl=args.impl or "electra_tf")
    return _once_or_compare(finetune, options, args)


def _once_or_compare(bench, options, args) -> int:
    """`--impl`: one run of `bench` (a module with `run_once`, `IMPLS`, `PREDICT_IMPLS`) here;
    otherwise every implementation in its own process, rounds interleaved."""
    from electra_tf.bench.finetune import compare

    if args.impl:
        _print(bench.run_once(options))
        return 0
    default = bench.PREDICT_IMPLS if args.mode == "predict" else bench.IMPLS
    impls = [i for i in args.impls.split(",") if i] or list(default)
    compare(options, impls, args.rounds, args.out, emit=_print)
    return 0


def _add_qa(which) -> None:
    from electra_tf.bench.question_answering import QaBenchOptions

    parser = which.add_parser(
        "qa", help="question answering's fine-tuning and predict speed beside PyTorch, a pipeline"
    )
    parser.add_argument("--impls", default="", help="compared (default: all for --mode)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--out", default="", help="append every record to this JSON-lines file")
    for field in dataclasses.fields(QaBenchOptions):  # --init, --train, --dev, --epochs, ...
        flag = "--" + field.name.replace("_", "-")
        default = None if field.name == "impl" else field.default
        parser.add_argument(flag, type=type(field.default), default=default,
                            help=f"default {field.default}" if default else "")  # fmt: skip
    parser.set_defaults(handler=_qa)


def _qa(args) -> int:
    from electra_tf.bench import question_answering as qa
    from electra_tf.config import ConfigError

    options = _options(qa.QaBenchOptions, args, impl=args.impl or "electra_tf")
    if not (options.init and options.train and options.dev):
        raise ConfigError("bench qa needs --init ENCODER --train FILE --dev FILE (SQuAD JSON).")
    return _once_or_compare(qa, options, args)
