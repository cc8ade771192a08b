"""One projection of the classifier at batch 32's shape, `[1660, 384] x [384, 1536]` plus
bias, in each runtime at 2 threads: LiteRT float32 and dynamic-range int8 (XNNPACK, and
LiteRT's own kernels), ONNX Runtime float32 and `quantize_dynamic` int8 (QInt8 weights).
Median ms of 20 calls after 3 warm-ups, in 5 rounds (order reversed in odd rounds), then
the median of the rounds; random weights (normal, sd 0.05) and inputs.

    python projection.py > projection.json
"""

import json
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

rng = np.random.default_rng(0)
kernel = (rng.normal(size=(384, 1536)) * 0.05).astype("float32")
bias = np.zeros(1536, "float32")
x = rng.normal(size=(1660, 384)).astype("float32")


def median_ms(call, repeats=20):
    for _ in range(3):
        call()
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        call()
        times.append(time.perf_counter() - begin)
    return round(1000 * float(np.median(times)), 2)


module = tf.Module()
module.f = tf.function(
    lambda x: tf.nn.bias_add(tf.matmul(x, kernel), bias),
    input_signature=[tf.TensorSpec([None, 384], tf.float32, name="x")],
)
calls = {}
for quantize in (None, "int8"):
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [module.f.get_concrete_function()], module
    )
    if quantize:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    flatbuffer = converter.convert()
    for resolver in (OpResolverType.AUTO, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES):
        runner = Interpreter(
            model_content=flatbuffer, num_threads=2, experimental_op_resolver_type=resolver
        ).get_signature_runner()
        where = "xnnpack" if resolver == OpResolverType.AUTO else "litert_builtin"
        calls[f"litert_{where}_{quantize or 'float32'}_ms"] = lambda r=runner: r(x=x)
with tempfile.TemporaryDirectory() as scratch:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Add", ["y", "b"], ["z"])],
        "projection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 384])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 1536])],
        [numpy_helper.from_array(kernel, "W"), numpy_helper.from_array(bias, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    plain, int8 = Path(scratch) / "p.onnx", Path(scratch) / "p8.onnx"
    onnx.save(model, plain)
    quantize_dynamic(str(plain), str(int8), weight_type=QuantType.QInt8)
    for name, path in (("float32", plain), ("int8", int8)):
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        calls[f"onnxruntime_{name}_ms"] = lambda s=session: s.run(None, {"x": x})
    rounds = {name: [] for name in calls}
    for number in range(5):
        for name in list(calls) if number % 2 == 0 else list(calls)[::-1]:
            rounds[name].append(median_ms(calls[name]))
report = {name: {"median": float(np.median(v)), "rounds": v} for name, v in rounds.items()}
print(json.dumps(report, indent=1))
