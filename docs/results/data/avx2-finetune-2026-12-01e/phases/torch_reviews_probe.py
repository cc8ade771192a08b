"""Phase timers around the PyTorch reviews loop of bench finetune (n = 1): batch gaps,
the time before the first batch, the gaps at epoch ends (dev passes)."""
import sys, time, json
from electra_tf.bench import finetune as ft
import electra_tf.data.batching  # noqa: F401 (as the mended bench: before the timer)
marks = []
orig = ft.peer_batches
def pb(options, lengths, epoch, rng):
    plan = orig(options, lengths, epoch, rng)
    def gen():
        for b in plan:
            marks.append((epoch, time.perf_counter())); yield b
        marks.append((epoch, time.perf_counter(), "end"))
    return list(plan) and _Wrap(plan)
class _Wrap(list):
    pass
# simpler: patch the loop's batches by timing model forward calls instead
import torch, transformers
calls = []
_fwd = transformers.BertForSequenceClassification.forward
def fwd(self, *a, **k):
    t = time.perf_counter(); out = _fwd(self, *a, **k); calls.append((self.training, t, time.perf_counter())); return out
transformers.BertForSequenceClassification.forward = fwd
o = ft.FinetuneBenchOptions(impl="pytorch", task="reviews", data_dir="/tmp/avx2data", batches="ours", round=int(sys.argv[1]) if len(sys.argv) > 1 else 1)
enc, splits, labels, rows = ft.workload(o)
t0 = time.perf_counter()
secs, scores = ft._train_pytorch(o, enc, splits, labels)
train = [c for c in calls if c[0]]
gaps = sorted(b[1] - a[1] for a, b in zip(train, train[1:]))
evals = [c for c in calls if not c[0]]
print(json.dumps({"total": round(secs, 2), "to_first_train_batch": round(train[0][1] - t0, 2),
  "train_batches": len(train), "median_gap": round(gaps[len(gaps)//2], 3), "sum_train_gaps": round(sum(gaps), 1),
  "eval_forward_s": round(sum(c[2] - c[1] for c in evals), 2), "eval_batches": len(evals),
  "after_last_train": round(t0 + secs - train[-1][2], 2), "scores": scores}))
