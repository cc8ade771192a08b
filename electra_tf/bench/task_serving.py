"""A fine-tuned classifier served on a CPU: our SavedModel and LiteRT against ONNX Runtime.

    electra-tf bench serving --run RUN [--rounds 3] [--calls 200] [--batch 32] [--threads 2]

`build(run, work)` makes, from the same fine-tuned weights (`RUN`, a run of
`electra-tf finetune` of a text-classification kind), every served form once:

- `saved_model`: this package's TF Serving export (`export_finetuned`), raw text in; its
  encoder blocks run as two lanes (`export --lanes`), so it gets 1 intra-op x 2 inter-op
  threads for `--threads 2` (`_thread_split`: the same number of threads);
- `saved_model_one_lane`: the same as one chain (`export --lanes 1`), `--threads` intra-op
  threads and 1 inter-op;
- `saved_model_xla`: the same with its encoder and head compiled by XLA (`export --xla`);
  its warm-up also calls every timed text and batch once, so that XLA's compilations (one
  per new `[batch, length]`) fall there, as after TF Serving's warm-up (`warmup_s`);
- `saved_model_bf16`: the same with its encoder in bfloat16, its weights bfloat16 constants
  (`export --bfloat16`; for CPUs with AMX or AVX512_BF16);
- `litert`, `litert_int8`: its LiteRT export, float32 and dynamic-range int8;
- `onnxruntime`, `onnxruntime_int8`, `onnxruntime_parallel`: the same weights as a PyTorch
  module (Hugging Face's
  `ElectraModel` and a linear layer on [CLS], checked equal to the Keras model),
  exported to ONNX, optimized by `onnxruntime.transformers.optimizer` (BERT fusions)
  and, for int8, quantized by `onnxruntime.quantization.quantize_dynamic` (int8
  weights), each run with the transformers fast tokenizer over the run's vocabulary:
  the route Hugging Face Optimum takes; `onnxruntime_parallel` is the float32 model under
  ONNX Runtime's parallel executor (1 intra-op x `--threads` inter-op threads), the peer's
  own policy for running independent nodes side by side;
- `pipeline`: transformers' `text-classification` pipeline over the PyTorch module.

Then each runtime runs in a process of its own, once per round in the order of
`electra_tf.bench.peers.schedule` (reversed in even rounds), with `--threads` threads, and
times, tokenization and label names included: `--calls` single-text calls (median and p99
latency) and batches of `--batch` texts (texts/s). Texts are the run's dev file. Each record also
carries the labels it gave, and the summary how many agree with the SavedModel's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

from electra_tf.bench import task_serving_peers as onnx_peers

__all__ = ["TaskServingOptions", "IMPLS", "build", "run_once", "compare", "summarize"]

IMPLS = (
    "saved_model", "saved_model_one_lane", "saved_model_xla", "saved_model_bf16", "litert",
    "litert_int8", "onnxruntime", "onnxruntime_parallel", "onnxruntime_int8", "pipeline",
)  # fmt: skip

#: The SavedModel forms and the `export_finetuned` settings each is written with.
SAVED_MODELS = {
    "saved_model": {},
    "saved_model_one_lane": {"lanes": 1},
    "saved_model_xla": {"jit_compile": True},
    "saved_model_bf16": {"bfloat16_rows": None},  # `export --bfloat16`'s threshold
}


@dataclasses.dataclass
class TaskServingOptions:
    """One runtime's timing (`electra-tf bench serving --run` flags, one field each)."""

    work: str = ""  # the folder `build` filled
    impl: str = "saved_model"
    calls: int = 200  # timed single-text calls
    batches: int = 10  # timed batches
    batch: int = 32
    threads: int = 2
    warmup: int = 5


def build(run, work, log=print) -> dict:
    """Every served form of `run`'s model into `work` (see the module docstring)."""
    import torch

    from electra_tf.finetuning.predict import open_predictor, read_inputs
    from electra_tf.tasks.litert import export_litert
    from electra_tf.tasks.model_folder import load_finetuned

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    model, info = load_finetuned(run)
    texts = read_inputs(info["data"]["dev"]["path"], info)[0]
    (work / "texts.json").write_text(json.dumps(list(texts)))
    (work / "vocab.txt").write_text("".join(f"{t}\n" for t in model.preprocessor.vocabulary))
    seq = model.preprocessor.sequence_length
    log("[bench] SavedModel and LiteRT exports")
    _export_variants(model, info, work)
    for impl, quantize in (("litert", None), ("litert_int8", "int8")):
        export_litert(model, info, work / impl, model_name="m", quantize=quantize)
    log("[bench] PyTorch module, ONNX and int8 ONNX")
    module = onnx_peers.torch_module(model)
    module.save_pretrained(str(work / "hf"))
    tokenizer = onnx_peers.hf_tokenizer(work, bool(model.preprocessor.lower_case), seq)
    sample = list(texts[:64])
    with torch.inference_mode():
        encoded = tokenizer(sample, padding=True, truncation=True, return_tensors="pt")
        torch_logits = module(**encoded).logits.numpy()
    keras_logits = np.asarray(model.predict(sample, verbose=0))
    ours = open_predictor(work / "saved_model")(sample)
    record = {
        "kind": "serving_task_build",
        "torch_vs_keras_max_abs": float(np.abs(torch_logits - keras_logits).max()),
        "same_labels_savedmodel_keras": sum(
            row["label"] == model.labels[int(i)]
            for row, i in zip(ours, keras_logits.argmax(1), strict=True)
        ),
        "sample": len(sample),
        **onnx_peers.onnx_models(module, work, model.encoder.num_heads, model.encoder.hidden_dim),
    }
    for name in ("model.onnx", "model_int8.onnx"):
        logits = onnx_peers.onnx_session(work / name, 2).run(None, onnx_peers.feeds(encoded))[0]
        record[f"{name}_vs_keras_max_abs"] = float(np.abs(logits - keras_logits).max())
    lower_case, labels = bool(model.preprocessor.lower_case), list(model.labels)
    meta = {**record, "lower_case": lower_case, "seq": seq, "labels": labels}
    (work / "build.json").write_text(json.dumps(meta))
    return record


def _export_variants(model, info, work: Path, only=tuple(SAVED_MODELS)):
    """The SavedModel forms named in `only` into `work` (`SAVED_MODELS`)."""
    from electra_tf.tasks.export import BFLOAT16_ROWS, export_finetuned

    for impl in only:
        settings = dict(SAVED_MODELS[impl])
        if "bfloat16_rows" in settings:
            settings["bfloat16_rows"] = BFLOAT16_ROWS
        export_finetuned(model, info, work / impl, model_name="m", **settings)


def _export_missing(run, work: Path, impls) -> None:
    """The SavedModel forms among `impls` that a work folder built before them lacks."""
    from electra_tf.tasks.model_folder import load_finetuned

    missing = [i for i in SAVED_MODELS if i in impls and not (work / i).exists()]
    if missing:
        _export_variants(*load_finetuned(run), work, only=missing)


def _thread_split(options: TaskServingOptions, work: Path) -> tuple[int, int]:
    """TensorFlow's (intra-op, inter-op) threads for `options.impl`: `--threads` in all. A
    SavedModel whose encoder runs L lanes gets min(L, threads) inter-op threads (its lanes side
    by side), the rest intra-op; everything else `--threads` intra-op and 1 inter-op."""
    threads, lanes = options.threads, 1
    if options.impl in SAVED_MODELS:
        config = work / options.impl / "m" / "1" / "assets.extra" / "electra_config.json"
        lanes = int(json.loads(config.read_text()).get("lanes") or 1)
    inter = max(1, min(lanes, threads))
    return max(1, threads // inter), inter


def _runtime(options: TaskServingOptions, work: Path, meta: dict):
    """A callable: list of texts -> list of label names."""
    impl, threads = options.impl, options.threads
    if _is_tf(impl):
        import tensorflow as tf

        intra, inter = _thread_split(options, work)
        tf.config.threading.set_intra_op_parallelism_threads(intra)
        tf.config.threading.set_inter_op_parallelism_threads(inter)
        from electra_tf.finetuning.predict import open_predictor

        predictor = open_predictor(work / impl, num_threads=threads)
        return lambda texts: [row["label"] for row in predictor(texts)]
    tokenizer = onnx_peers.hf_tokenizer(work, meta["lower_case"], meta["seq"])
    labels = meta["labels"]
    if impl == "pipeline":
        import torch
        from transformers import pipeline

        torch.set_num_threads(threads)
        module = onnx_peers.load_torch(work)
        classify = pipeline("text-classification", model=module, tokenizer=tokenizer, device=-1)
        return lambda texts: [
            r["label"] for r in classify(list(texts), batch_size=len(texts), truncation=True)
        ]
    session = onnx_peers.onnx_session(
        work / ("model_int8.onnx" if "int8" in impl else "model.onnx"), threads,
        parallel=impl == "onnxruntime_parallel",
    )  # fmt: skip

    def call(texts):
        encoded = tokenizer(list(texts), padding=True, truncation=True, return_tensors="np")
        logits = session.run(None, onnx_peers.feeds(encoded))[0]
        return [labels[i] for i in logits.argmax(-1)]

    return call


def _is_tf(impl: str) -> bool:
    return impl in SAVED_MODELS or impl.startswith("litert")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _timed_texts(options: TaskServingOptions, texts: list, number: int) -> tuple[list, list]:
    """(the single-text calls' inputs, the batches) that round `number` times."""
    singles = [texts[(number * options.calls + i) % len(texts) :][:1] for i in range(options.calls)]
    chunks = []
    for i in range(options.batches):
        start = (i * options.batch) % max(1, len(texts) - options.batch)
        chunks.append(texts[start : start + options.batch])
    return singles, chunks


def run_once(options: TaskServingOptions, number: int = 0) -> dict:
    """One runtime in this process: load, warm up, then single calls and batches."""
    work = Path(options.work)
    meta = json.loads((work / "build.json").read_text())
    texts = json.loads((work / "texts.json").read_text())
    started = time.perf_counter()
    call = _runtime(options, work, meta)
    load = time.perf_counter() - started
    for i in range(options.warmup):
        call(texts[i : i + 1])
        call(texts[i * options.batch : (i + 1) * options.batch])
    begin = time.perf_counter()
    singles, chunks = _timed_texts(options, texts, number)
    if options.impl.endswith("_xla"):  # each new shape compiles once: here, not when timed
        for inputs in singles + chunks:
            call(inputs)
    warmup_s = time.perf_counter() - begin
    single = []
    for text in singles:
        begin = time.perf_counter()
        call(text)
        single.append(time.perf_counter() - begin)
    batched, done = [], 0
    for chunk in chunks:
        begin = time.perf_counter()
        done += len(call(chunk))
        batched.append(time.perf_counter() - begin)
    labels = []
    for start in range(0, min(len(texts), 256), options.batch):
        labels += call(texts[start : start + options.batch])
    single_ms = np.asarray(single) * 1000.0
    return {
        "kind": "serving_task",
        "impl": options.impl,
        "round": number,
        "threads": options.threads,
        "tf_intra_inter": list(_thread_split(options, work)) if _is_tf(options.impl) else None,
        "load_s": round(load, 2),
        "warmup_s": round(warmup_s, 2),
        "batch1_p50_ms": round(float(np.percentile(single_ms, 50)), 3),
        "batch1_p99_ms": round(float(np.percentile(single_ms, 99)), 3),
        "batch1_calls": len(single),
        "batch": options.batch,
        "batch_texts_per_s": round(done / sum(batched), 2),
        "batches": len(batched),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "labels": labels,
    }


def _command(options: TaskServingOptions, impl: str, number: int) -> list:
    fields = dataclasses.asdict(dataclasses.replace(options, impl=impl))
    return [sys.executable, "-m", "electra_tf.bench.task_serving", json.dumps(fields), str(number)]


def compare(options: TaskServingOptions, impls, rounds: int, out: str = "", emit=print) -> list:
    """Each runtime once per round, each in its own process, in `peers.schedule`'s order."""
    from electra_tf.bench import peers

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return peers.interleave(
        lambda impl, number: _command(options, impl, number), impls, rounds,
        error_kind="serving_task_error", summarize=summarize, out=out, emit=emit,
        shown=lambda record: {k: v for k, v in record.items() if k != "labels"},
    )  # fmt: skip


def summarize(records, reference: str = "onnxruntime_int8", also=("onnxruntime",)) -> list:
    """Per runtime: median [min, max] of p50, p99 and texts/s over rounds; its speed over
    `reference`'s, paired per round (above 1: faster), and over each runtime of `also` that
    ran (ONNX Runtime float32: issue 57's batch-1 bar); labels agreeing with the SavedModel's."""
    import statistics

    runs = [r for r in records if r.get("kind") == "serving_task"]
    by_impl = {}
    for record in runs:
        by_impl.setdefault(record["impl"], {})[record["round"]] = record
    base = by_impl.get("saved_model", {})
    references = [reference, *(r for r in also if r in by_impl and r != reference)]

    def spread(values):
        return [statistics.median(values), min(values), max(values)] if values else None

    lines = []
    for impl, rounds in by_impl.items():
        line = {"kind": "serving_task_summary", "impl": impl, "rounds": len(rounds)}
        for key in ("batch1_p50_ms", "batch1_p99_ms", "batch_texts_per_s", "peak_rss_mb"):
            line[key] = spread([r[key] for r in rounds.values()])
        for name in references:
            ref = by_impl.get(name, {})
            paired = [n for n in rounds if n in ref]
            line[f"batch1_speed_vs_{name}"] = spread(
                [ref[n]["batch1_p50_ms"] / rounds[n]["batch1_p50_ms"] for n in paired]
            )
            line[f"batch_speed_vs_{name}"] = spread(
                [rounds[n]["batch_texts_per_s"] / ref[n]["batch_texts_per_s"] for n in paired]
            )
        if base:
            mine, theirs = (
                next(iter(rounds.values()))["labels"],
                next(iter(base.values()))["labels"],
            )
            line["labels_as_saved_model"] = [
                sum(a == b for a, b in zip(mine, theirs, strict=True)),
                len(mine),
            ]
        lines.append(line)
    return lines


def add_arguments(parser) -> None:
    """`electra-tf bench serving`'s flags for `--run`."""
    task = parser.add_argument_group(
        "a fine-tuned classifier (--run): SavedModel and LiteRT against ONNX Runtime, raw text"
    )
    task.add_argument("--run", help="a fine-tuned text-classification run folder")
    task.add_argument("--work", default="", help="where the served forms are built (default: "
                      "RUN/serving-bench; reused when present)")  # fmt: skip
    task.add_argument("--impls", default="", help="compared (default: all)")
    task.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    task.add_argument("--calls", type=int, default=200, help="single-text calls (default 200)")
    task.add_argument("--batch", type=int, default=32, help="texts per batch (default 32)")
    task.add_argument("--timed-batches", type=int, default=10, help="batches timed (default 10)")
    task.add_argument("--threads", type=int, default=2, help="threads each (default 2)")
    task.add_argument("--out", default="", help="append every record to this JSON-lines file")


def run_from_args(args, emit=print) -> list:
    """Builds the served forms (unless `--work` has them), then `compare`."""
    work = Path(args.work or Path(args.run) / "serving-bench")
    if not (work / "build.json").exists():
        emit(build(args.run, work, log=lambda line: print(line, file=sys.stderr)))
    options = TaskServingOptions(
        work=str(work), calls=args.calls, batches=args.timed_batches, batch=args.batch,
        threads=args.threads, warmup=args.warmup,
    )  # fmt: skip
    impls = [i for i in args.impls.split(",") if i] or list(IMPLS)
    _export_missing(args.run, work, impls)  # a work folder built before these runtimes
    return compare(options, impls, args.rounds, args.out, emit=emit)


if __name__ == "__main__":
    print(json.dumps(run_once(TaskServingOptions(**json.loads(sys.argv[1])), int(sys.argv[2]))))
