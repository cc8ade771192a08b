"""The LiteRT classifier with and without the padding skipped, in one process, alternating.

    python padding.py RUN WORK ROUNDS > padding.json

RUN: the fine-tuned run; WORK: a folder `electra-tf bench serving --run RUN` built (its
texts.json: the run's dev reviews). Four flatbuffers from the same weights (padded or
packed, float32 or int8), converted as `electra-tf export --format litert` does; per round
and flatbuffer, the median ms of 100 single-text calls and of 8 batches of 32 texts, 2
threads, XNNPACK; and the same for the SavedModel's text signature (`TaskServingModule`,
called in this process, TensorFlow at 2 intra-op threads); the order reversed in even
rounds. Also the largest logit difference packed against padded on 64 texts, and whether
XNNPACK's newer-features flag
(`experimental_default_delegate_latest_features`) changes the packed int8 timings.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text
from ai_edge_litert.interpreter import InterpreterWithCustomOps

from electra_tf.tasks.export import TaskServingModule
from electra_tf.tasks.litert import LiteTextModule, convert
from electra_tf.tasks.model_folder import load_finetuned

run, work, rounds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
tf.config.threading.set_intra_op_parallelism_threads(2)
tf.config.threading.set_inter_op_parallelism_threads(1)
texts = json.loads((work / "texts.json").read_text())
model, info = load_finetuned(run)
seq = model.preprocessor.sequence_length


def runner(path, latest=False):
    interpreter = InterpreterWithCustomOps(
        model_path=str(path), num_threads=2,
        custom_op_registerers=tf_text.tflite_registrar.SELECT_TFTEXT_OPS,
        experimental_default_delegate_latest_features=latest,
    )  # fmt: skip
    return interpreter.get_signature_runner()


def timings(call):
    out = {}
    for batch, count in ((1, 100), (32, 8)):
        chunks = [np.array(texts[(i * batch) % 900 :][:batch], dtype=object) for i in range(count)]
        call(text=chunks[0])
        times = []
        for chunk in chunks:
            begin = time.perf_counter()
            call(text=chunk)
            times.append(time.perf_counter() - begin)
        out[f"batch_{batch}_ms"] = 1000 * float(np.median(times))
    return out


with tempfile.TemporaryDirectory() as scratch:
    runners, logits = {}, {}
    for skip in (False, True):
        module = LiteTextModule(model, seq_length=seq, skip_padding=skip)
        for quantize in (None, "int8"):
            name = f"{'packed' if skip else 'padded'}_{quantize or 'float32'}"
            path = Path(scratch) / f"{name}.tflite"
            flatbuffer, outputs = convert(module, quantize)
            path.write_bytes(flatbuffer)
            runners[name] = runner(path)
            result = runners[name](text=np.array(texts[:64], dtype=object))
            logits[name] = result[f"output_{outputs.index('logits')}"]
    runners["packed_int8_latest"] = runner(Path(scratch) / "packed_int8.tflite", latest=True)
    vocab = Path(scratch) / "vocab.txt"
    vocab.write_text("".join(f"{t}\n" for t in model.preprocessor.vocabulary))
    for skip in (False, True):
        module = TaskServingModule(model, str(vocab), seq_length=seq, skip_padding=skip)
        name = f"saved_model_{'packed' if skip else 'padded'}"
        runners[name] = lambda text, m=module: m.serve_text(tf.constant(list(text)))
        logits[name] = runners[name](text=texts[:64])["logits"].numpy()
    records = []
    for number in range(rounds):
        names = list(runners) if number % 2 == 0 else list(runners)[::-1]
        for name in names:
            records.append({"round": number, "model": name, **timings(runners[name])})
    summary = {}
    for name in runners:
        mine = [r for r in records if r["model"] == name]
        summary[name] = {
            key: float(np.median([r[key] for r in mine])) for key in ("batch_1_ms", "batch_32_ms")
        }
    for quantize in ("float32", "int8", "saved_model"):
        if quantize == "saved_model":
            base, packed = logits["saved_model_padded"], logits["saved_model_packed"]
        else:
            base, packed = logits[f"padded_{quantize}"], logits[f"packed_{quantize}"]
        summary[f"logits_max_abs_{quantize}"] = float(np.abs(base - packed).max())
        summary[f"same_argmax_{quantize}"] = int((base.argmax(1) == packed.argmax(1)).sum())
    print(json.dumps({"summary": summary, "records": records}, indent=1))
