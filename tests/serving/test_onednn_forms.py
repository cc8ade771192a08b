"""Exports never ask TensorFlow's oneDNN for the batched matmul it gets wrong.

TensorFlow 2.20's oneDNN batched matmul of a rank-4 `[B, 1, M, K]` tensor and a broadcast
operand (a 2-D kernel, say) overruns its buffers on AVX-512 CPUs and corrupts the heap
(tensorflow/tensorflow#117700). The joint question-answering head asked for exactly that
with `beam_size=1` (`[windows, 1, length, hidden] @ [hidden, 1]`): its SavedModel crashed
the process serving it, 3 runs of 3 on this Intel CPU, before the head's products became
2-D (`question_answering._rows_product`).
"""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the text ops the serving graphs hold)
from helpers import TESTS
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import function_def_to_graph

CHILD = TESTS / "serving" / "qa_beam_one_child.py"


def _broadcast(x, y) -> bool:
    """Whether a batched matmul of shapes `x` and `y` broadcasts (ranks or batch differ)."""
    return x.rank != y.rank or any(
        a is not None and b is not None and a != b for a, b in zip(x[:-2], y[:-2])
    )


def broadcast_batched_matmuls(saved_model_pb):
    """`(function, node, lhs shape, rhs shape)` of each batched matmul in a SavedModel whose
    operands differ in rank or in a known batch dimension (a broadcast), and the number of
    batched matmuls read. A function holding one that cannot be read is reported too."""
    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString(saved_model_pb.read_bytes())
    found, read = [], 0
    graph_def = proto.meta_graphs[0].graph_def
    with tf.Graph().as_default():  # every function of the library, for the ones calling them
        tf.graph_util.import_graph_def(graph_def, name="")
        for fdef in graph_def.library.function:
            if not any(n.op.startswith("BatchMatMul") for n in fdef.node_def):
                continue
            try:
                graph = function_def_to_graph.function_def_to_graph(fdef)
            except (ValueError, RuntimeError) as error:
                found.append((fdef.signature.name, "(not read)", str(error)[:200], ""))
                continue
            for op in graph.get_operations():
                if op.type.startswith("BatchMatMul"):
                    read += 1
                    x, y = (t.shape for t in op.inputs[:2])
                    if _broadcast(x, y):
                        found.append((fdef.signature.name, op.name, str(x), str(y)))
    return found, read


@pytest.fixture(scope="module")
def beam_of_one(tmp_path_factory):
    """The child's export folder and its finished process."""
    out = tmp_path_factory.mktemp("beam_of_one")
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent), TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, str(CHILD), str(out)]
    return out, subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def test_a_joint_answer_head_with_a_beam_of_one_serves_the_keras_models_answers(beam_of_one):
    _, child = beam_of_one
    assert child.returncode == 0, child.stderr[-3000:]  # -11 or -6 where the heap was hit
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["answers"] == result["expected"] and any(result["answers"])


def test_the_exported_graphs_hold_no_broadcast_batched_matmul(beam_of_one):
    """Every batched matmul of the SavedModel (attention's) multiplies operands of one rank
    and one batch shape; before the fix the end scorer's `[?, ?, ?, 16] @ [16, 1]` was in
    each serving function. Read from the export even where serving it crashed."""
    out, _ = beam_of_one
    (saved_model_pb,) = out.rglob("saved_model.pb")
    found, read = broadcast_batched_matmuls(saved_model_pb)
    assert read >= 8 and not found, found
