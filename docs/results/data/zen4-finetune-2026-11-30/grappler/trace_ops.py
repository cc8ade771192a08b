"""Op types in the fine-tuning train step's graph and its trace time, dropout on and off."""
import collections, json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, tensorflow as tf, keras
_opts = json.loads(os.environ.get("GRAPPLER", "{}"))
if _opts:
    tf.config.optimizer.set_experimental_options(_opts)
from electra_tf.tasks.initialization import load_initialization
from electra_tf.tasks.text_classifier import ElectraTextClassifier

dropout = float(sys.argv[1])
init = load_initialization("/tmp/democlone/data/models/all-MiniLM-L6-v2")
model = ElectraTextClassifier.from_source("/tmp/democlone/data/models/all-MiniLM-L6-v2", labels=["a", "b"], dropout=dropout) if hasattr(ElectraTextClassifier, "from_source") else None
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.tasks.optimizer import finetuning_optimizer
config = FinetuneConfig(learning_rate=5e-5).resolved(384, 3)
model.compile(optimizer=finetuning_optimizer(model, config, 100))
x = {k: np.ones((32, 40), np.int32) for k in ("token_ids", "padding_mask", "segment_ids")}
y = np.zeros((32,), np.int32)
model.fit(x, y, epochs=1, batch_size=32, verbose=0) if False else None
spec = ({k: tf.TensorSpec([None, None], tf.int32) for k in x}, tf.TensorSpec([None], tf.int32))
model.optimizer.build(model.trainable_variables) if hasattr(model.optimizer, "build") else None
f = tf.function(lambda a, b: model.train_step((a, b)))
t = time.perf_counter(); cf = f.get_concrete_function(*spec); trace = time.perf_counter() - t
ops = collections.Counter(op.type for op in cf.graph.get_operations())
def walk(g, c):
    for fn in g._functions.values():
        for op in fn.graph.get_operations() if hasattr(fn, "graph") else []:
            c[op.type] += 1
print(json.dumps({"dropout": dropout, "trace_s": round(trace, 2), "ops": sum(ops.values()), "top": ops.most_common(25)}))
xs = {k: tf.constant(v) for k, v in x.items()}
ys = tf.constant(y)
t = time.perf_counter(); cf(xs, ys); first = time.perf_counter() - t
t = time.perf_counter(); cf(xs, ys); second = time.perf_counter() - t
t = time.perf_counter(); cf(xs, ys); third = time.perf_counter() - t
steps = []
for _ in range(8):
    t = time.perf_counter(); cf(xs, ys); steps.append(time.perf_counter() - t)
print(json.dumps({"grappler": _opts, "median_step_s": round(float(np.median(steps)), 3), "dropout": dropout, "first_call_s": round(first, 2), "second_s": round(second, 3), "third_s": round(third, 3)}))
