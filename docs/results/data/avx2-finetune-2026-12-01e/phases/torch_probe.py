"""Phase timers around the PyTorch loops of `bench finetune` (reviews) and `bench qa`, as the
mended benches run them (imports before the timer): the time to the first training batch,
the median gap between training batches (one whole step), the evaluation passes' forward
time, and the time after the last training batch. Usage: torch_probe.py reviews|qa ROUND."""
import json, sys, time
import torch, transformers  # noqa: F401
from electra_tf.bench import finetune as ft, question_answering as qa

calls = []
def timed(cls):
    forward = cls.forward
    def wrapper(self, *a, **k):
        t = time.perf_counter(); out = forward(self, *a, **k)
        calls.append((self.training, t, time.perf_counter())); return out
    cls.forward = wrapper
timed(transformers.BertForSequenceClassification); timed(transformers.BertForQuestionAnswering)
task, round_ = sys.argv[1], int(sys.argv[2])
if task == "reviews":
    o = ft.FinetuneBenchOptions(impl="pytorch", task="reviews", data_dir=sys.argv[3], batches="ours", round=round_)
    enc, splits, labels, rows = ft.workload(o)
    t0 = time.perf_counter(); secs, scores = ft._train_pytorch(o, enc, splits, labels)
else:
    o = qa.QaBenchOptions(impl="pytorch", init=sys.argv[3], train=sys.argv[4], dev=sys.argv[5], round=round_)
    t0 = time.perf_counter(); secs, scores = qa._train_pytorch(o)
train = [c for c in calls if c[0]]
gaps = sorted(b[1] - a[1] for a, b in zip(train, train[1:]))
evals = [c for c in calls if not c[0]]
print(json.dumps({"impl": "pytorch", "task": task, "round": round_, "total_s": round(secs, 2),
  "to_first_train_batch_s": round(train[0][1] - t0, 2), "train_batches": len(train),
  "median_step_s": round(gaps[len(gaps) // 2], 3), "eval_forward_s": round(sum(c[2] - c[1] for c in evals), 2),
  "eval_batches": len(evals), "after_last_train_batch_s": round(t0 + secs - train[-1][2], 2), "scores": scores}))
