"""Profiles steps 10-19 of `bench qa --impl electra_tf` (argv) with TensorFlow's profiler;
prints op time per step by op type and by the layer the op belongs to."""
import sys, time, glob, collections, json, re, tempfile
from pathlib import Path
import tensorflow as tf
try:
    from tsl.profiler.protobuf import xplane_pb2
except ImportError:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
from electra_tf.finetuning import engine
folder = tempfile.mkdtemp(); state = {}
orig = engine.EpochSelection.on_train_batch_begin
def begin(self, batch, logs=None):
    if batch == 10: tf.profiler.experimental.start(folder); state["t"] = time.perf_counter()
    if batch == 20:
        state["wall"] = time.perf_counter() - state["t"]; tf.profiler.experimental.stop(); report()
    return orig(self, batch, logs)
engine.EpochSelection.on_train_batch_begin = begin
def report():
    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(sorted(glob.glob(f"{folder}/**/*.xplane.pb", recursive=True))[-1]).read_bytes())
    by_type, by_scope, top = collections.Counter(), collections.Counter(), collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if ":" not in name or "::" in name: continue
                node, op = name.rsplit(":", 1)
                if op.startswith(" __inference") or op.startswith("__inference"): continue
                ms = event.duration_ps / 1e9 / 10
                by_type[op] += ms
                scope = re.sub(r"_\d+(?=/|$)", "", node)
                scope = re.sub(r"transformer_layer", "block", scope)
                parts = [p for p in scope.split("/") if p not in ("gradient_tape", "electra_question_answerer", "encoder")]
                key = ("grad " if "gradient_tape" in node else "") + "/".join(parts[:2])
                by_scope[key] += ms
                if "/" not in node.replace("StatefulPartitionedCall/", "", 1) or node.count("/") <= 1:
                    top[node + ":" + op] += ms
    total = sum(by_type.values())
    print(f"STEPPROF wall per step {state['wall']/10*1e3:.0f} ms; op time per step {total:.0f} ms", file=sys.stderr)
    for k, v in by_type.most_common(30): print(f"TYPE {v:8.1f} ms {k}", file=sys.stderr)
    for k, v in by_scope.most_common(40): print(f"SCOPE {v:8.1f} ms {k}", file=sys.stderr)
    for k, v in top.most_common(15): print(f"TOP {v:8.1f} ms {k}", file=sys.stderr)
    json.dump({"type": by_type, "scope": by_scope, "wall_ms": state["wall"] / 10 * 1e3}, open("/tmp/stepprof/tf.json", "w"), indent=1)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
