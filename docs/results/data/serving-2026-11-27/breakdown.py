"""Where a served call's time goes: tokenization and packing against the model, LiteRT beside
ONNX Runtime, at batch 1 and 32 (2 threads); and ONNX Runtime int8's own profile by op type.

    python breakdown.py RUN WORK > breakdown.json

RUN: the fine-tuned run; WORK: the folder `electra-tf bench serving --run RUN` built.
LiteRT: the whole flatbuffer against one holding only the tokenizer and packing (the
same ops, converted the same way). ONNX Runtime: the fast tokenizer alone against the
session alone. Medians over 200 calls (batch 1) and 20 calls (batch 32), order alternating.
"""

import collections
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf.bench.task_serving_peers import (  # moved there 2026-11-29
    feeds as _feeds, hf_tokenizer as _hf_tokenizer, onnx_session as _onnx_session)
from electra_tf.tasks.litert import LiteRTPredictor, LiteTextModule
from electra_tf.tasks.model_folder import load_finetuned

run, work = sys.argv[1], Path(sys.argv[2])
texts = json.loads((work / "texts.json").read_text())
model, info = load_finetuned(run)
meta = json.loads((work / "build.json").read_text())


def tokenizer_only_flatbuffer(folder: Path) -> Path:
    module = LiteTextModule(model, seq_length=model.preprocessor.sequence_length)
    spec = tf.TensorSpec([None], tf.string, name="text")
    module.ids = tf.function(lambda text: dict(zip(("ids", "mask", "segments"),
                                                   module.packed(text))), input_signature=[spec])
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [module.ids.get_concrete_function()], module)
    converter.allow_custom_ops = True
    path = folder / "tokenizer.tflite"
    path.write_bytes(converter.convert())
    return path


def median_ms(call, batch, repeats):
    times = []
    for i in range(repeats):
        chunk = texts[(i * batch) % (len(texts) - batch):][:batch]
        begin = time.perf_counter()
        call(chunk)
        times.append(time.perf_counter() - begin)
    return round(1000 * float(np.median(times)), 3)


with tempfile.TemporaryDirectory() as scratch:
    tok_path = tokenizer_only_flatbuffer(Path(scratch))
    tokenize = LiteRTPredictor(tok_path, ["text"], ["ids", "mask", "segments"], num_threads=2)
    lite = {q: LiteRTPredictor(work / folder / "m" / "model.tflite", ["text"],
                               json.loads((work / folder / "m" / "electra_config.json")
                                          .read_text())["outputs"], num_threads=2)
            for q, folder in (("None", "litert"), ("int8", "litert_int8"))}  # fmt: skip
    tokenizer = _hf_tokenizer(work, meta["lower_case"], meta["seq"])
    sessions = {name: _onnx_session(work / name, 2) for name in ("model.onnx", "model_int8.onnx")}

    def hf_tokens(chunk):
        return tokenizer(list(chunk), padding=True, truncation=True, return_tensors="np")

    report = {}
    for batch, repeats in ((1, 200), (32, 20)):
        for call in [lambda c: tokenize(c)] + [lambda c, p=p: p(c) for p in lite.values()] + [
                hf_tokens]:  # fmt: skip
            call(texts[:batch])  # warm
        encoded = [hf_tokens(texts[(i * batch) % (len(texts) - batch):][:batch])
                   for i in range(repeats)]  # fmt: skip
        row = {
            "litert_tokenize_pack_ms": median_ms(tokenize, batch, repeats),
            "litert_whole_fp32_ms": median_ms(lite["None"], batch, repeats),
            "litert_whole_int8_ms": median_ms(lite["int8"], batch, repeats),
            "hf_tokenize_ms": median_ms(hf_tokens, batch, repeats),
        }
        for name, session in sessions.items():
            session.run(None, _feeds(encoded[0]))
            times = []
            for item in encoded:
                begin = time.perf_counter()
                session.run(None, _feeds(item))
                times.append(time.perf_counter() - begin)
            row[f"ort_session_{name}_ms"] = round(1000 * float(np.median(times)), 3)
        report[f"batch_{batch}"] = row
    # ONNX Runtime int8's profile: time by op type over 50 batch-32 calls.
    import onnxruntime as ort

    settings = ort.SessionOptions()
    settings.intra_op_num_threads, settings.inter_op_num_threads = 2, 1
    settings.enable_profiling = True
    settings.profile_file_prefix = str(Path(scratch) / "ort")
    session = ort.InferenceSession(str(work / "model_int8.onnx"), settings,
                                   providers=["CPUExecutionProvider"])  # fmt: skip
    for item in encoded[:20]:
        session.run(None, _feeds(item))
    events = json.loads(Path(session.end_profiling()).read_text())
    by_op = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"]
    total = sum(by_op.values())
    report["ort_int8_batch32_share_by_op"] = {
        op: round(us / total, 3) for op, us in by_op.most_common(8)
    }
print(json.dumps(report, indent=2))
