"""Where a served call's time goes, op by op: the TF SavedModel beside ONNX Runtime.

    python op_profile.py build WORK        # the classifier, its SavedModel and its ONNX forms
    python op_profile.py tf WORK > tf.json # SavedModel `serving_default`, TensorFlow's profiler
    python op_profile.py ort WORK > ort.json  # ONNX Runtime float32 and int8, its own profiler

The model: a MiniLM-shaped classifier (6 layers, hidden 384, 12 heads, intermediate 1536;
random weights over a made-up 3,000-word vocabulary, as ../serving-xla-2026-11-28/build.py),
exported as `electra-tf export` does (plain), and the same weights as ONNX fused and
quantized as `electra-tf bench serving` builds them (electra_tf.bench.task_serving_peers.onnx_models).
400 texts of 8-40 words. 2 intra-op threads, 1 inter-op, as the bench. Per batch size:
untraced wall times of the whole call (medians), then traced calls summed by op type
(TensorFlow: the op events of the XPlane trace; ONNX Runtime: its node events), divided by
the calls. Tokenization: TensorFlow's is inside the graph; ONNX Runtime's is the fast
tokenizer, timed apart.
"""

import collections
import glob
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CALLS = {1: 100, 32: 10}
WARMUP = 10


def _batches(texts, batch, calls):
    return [texts[(i * batch) % len(texts) :][:batch] for i in range(calls)]


def build(work: Path) -> None:
    import keras

    from electra_tf.bench.task_serving_peers import onnx_models as _onnx, torch_module as _torch_module
    from electra_tf.data.vocabulary import SPECIAL_TOKENS
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.text_classifier import ElectraTextClassifier
    from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

    rng = np.random.default_rng(0)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    words = sorted({"".join(rng.choice(letters, size=int(rng.integers(2, 8))))
                    for _ in range(3000)})  # fmt: skip
    tokens = list(SPECIAL_TOKENS) + words
    keras.utils.set_random_seed(1)
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=6, hidden_dim=384,
                             embedding_dim=384, num_heads=12, intermediate_dim=1536,
                             max_sequence_length=128)  # fmt: skip
    preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=128)
    model = ElectraTextClassifier(encoder, ["neg", "pos"], "classification", preprocessor)
    model.build()
    texts = [" ".join(rng.choice(words, size=int(rng.integers(8, 40)))) for _ in range(400)]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "texts.json").write_text(json.dumps(texts))
    (work / "vocab.txt").write_text("".join(f"{t}\n" for t in tokens))
    info = {"kind": "classification", "labels": ["neg", "pos"], "pair": False}
    fused = _onnx(_torch_module(model), work, 12, 384)
    export_finetuned(model, info, work / "saved_model", model_name="m", warmup=False)
    (work / "build.json").write_text(json.dumps(fused))


def _op_type(name: str) -> str | None:
    """The op type of an XPlane event named "node:Type" (None: not an op event)."""
    if ":" not in name or "::" in name:
        return None
    return name.rsplit(":", 1)[1]


def profile_tf(work: Path) -> dict:
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - the tokenizer's ops

    try:
        from tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2

    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    version = next((work / "saved_model").glob("*/*/saved_model.pb")).parent
    served = tf.saved_model.load(str(version)).signatures["serving_default"]
    texts = json.loads((work / "texts.json").read_text())
    report = {"runtime": "TF SavedModel serving_default", "tf": tf.__version__}
    for batch, calls in CALLS.items():
        chunks = _batches(texts, batch, calls)
        for chunk in chunks[:WARMUP]:
            served(text=tf.constant(chunk))
        walls = []
        for chunk in chunks:
            start = time.perf_counter()
            served(text=tf.constant(chunk))
            walls.append((time.perf_counter() - start) * 1e3)
        folder = tempfile.mkdtemp()
        tf.profiler.experimental.start(folder)
        for chunk in chunks:
            served(text=tf.constant(chunk))
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        space.ParseFromString(Path(sorted(glob.glob(f"{folder}/**/*.xplane.pb",
                                                    recursive=True))[-1]).read_bytes())
        count, picos = collections.Counter(), collections.Counter()
        for plane in space.planes:
            for line in plane.lines:
                for event in line.events:
                    op = _op_type(plane.event_metadata[event.metadata_id].name)
                    if op and not op.startswith(" __inference"):
                        count[op] += 1
                        picos[op] += event.duration_ps
        shutil.rmtree(folder, ignore_errors=True)
        report[f"batch_{batch}"] = _summary(walls, count, picos, calls, 1e9)
    return report


def _summary(walls, count, units, calls, per_ms) -> dict:
    total = sum(units.values()) / calls / per_ms
    return {
        "calls": calls,
        "wall_ms_median": round(statistics.median(walls), 3),
        "wall_ms_quartiles": [round(q, 3) for q in statistics.quantiles(walls, n=4)],
        "ops_per_call": round(sum(count.values()) / calls, 1),
        "op_time_ms_per_call": round(total, 3),
        "by_op_type": {
            op: {"ms_per_call": round(units[op] / calls / per_ms, 4),
                 "share": round(units[op] / calls / per_ms / total, 4),
                 "ops_per_call": round(count[op] / calls, 1)}
            for op, _ in units.most_common(15)
        },
    }  # fmt: skip


def profile_ort(work: Path) -> dict:
    import onnxruntime as ort

    from electra_tf.bench.task_serving_peers import feeds as _feeds, hf_tokenizer as _hf_tokenizer

    texts = json.loads((work / "texts.json").read_text())
    tokenizer = _hf_tokenizer(work, True, 128)
    report = {"onnxruntime": ort.__version__, **json.loads((work / "build.json").read_text())}
    for name in ("model.onnx", "model_int8.onnx"):
        for batch, calls in CALLS.items():
            chunks = _batches(texts, batch, calls)
            settings = ort.SessionOptions()
            settings.intra_op_num_threads, settings.inter_op_num_threads = 2, 1
            plain = ort.InferenceSession(str(work / name), settings,
                                         providers=["CPUExecutionProvider"])  # fmt: skip
            for chunk in chunks[:WARMUP]:
                plain.run(None, _feeds(tokenizer(chunk, padding=True, truncation=True)))
            walls, tokenizing = [], []
            for chunk in chunks:
                start = time.perf_counter()
                feeds = _feeds(tokenizer(chunk, padding=True, truncation=True))
                middle = time.perf_counter()
                plain.run(None, feeds)
                walls.append((time.perf_counter() - start) * 1e3)
                tokenizing.append((middle - start) * 1e3)
            settings.enable_profiling = True
            settings.profile_file_prefix = str(work / f"ort_{name}_{batch}")
            traced = ort.InferenceSession(str(work / name), settings,
                                          providers=["CPUExecutionProvider"])  # fmt: skip
            for chunk in chunks[:WARMUP]:
                traced.run(None, _feeds(tokenizer(chunk, padding=True, truncation=True)))
            skip = len(json.loads(Path(traced.end_profiling()).read_text()))
            traced = ort.InferenceSession(str(work / name), settings,
                                          providers=["CPUExecutionProvider"])  # fmt: skip
            for chunk in chunks[:WARMUP]:
                traced.run(None, _feeds(tokenizer(chunk, padding=True, truncation=True)))
            for chunk in chunks:
                traced.run(None, _feeds(tokenizer(chunk, padding=True, truncation=True)))
            events = json.loads(Path(traced.end_profiling()).read_text())[skip:]
            count, micros = collections.Counter(), collections.Counter()
            for event in events:
                if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
                    op = event.get("args", {}).get("op_name", "?")
                    count[op] += 1
                    micros[op] += event["dur"]
            record = _summary(walls, count, micros, calls, 1e3)
            record["tokenizer_ms_median"] = round(statistics.median(tokenizing), 3)
            report[f"{name}_batch_{batch}"] = record
    return report


if __name__ == "__main__":
    command, folder = sys.argv[1], Path(sys.argv[2])
    if command == "build":
        build(folder)
    else:
        print(json.dumps({"tf": profile_tf, "ort": profile_ort}[command](folder), indent=1))
