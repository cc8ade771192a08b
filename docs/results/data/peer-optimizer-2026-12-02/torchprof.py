"""PyTorch's side of tfprof.py: BertForQuestionAnswering on our batches of the QA bench
(as `bench qa`'s PyTorch loop), steps 10-19 under torch.profiler, time by op."""
import sys, time, json, math, os
import numpy as np, torch
from types import SimpleNamespace
from transformers import BertForQuestionAnswering
from electra_tf.bench import question_answering as qa
o = SimpleNamespace(init=sys.argv[1], train=sys.argv[2], dev=sys.argv[2], seq=64, doc_stride=32,
                    max_query_length=16, batch=16, seed=1, learning_rate=1e-4, epochs=1, round=1)
torch.manual_seed(1); torch.set_num_threads(os.cpu_count() or 1)
_, train = qa.windows_and_examples(o, "train")
model = BertForQuestionAnswering.from_pretrained(o.init); model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, eps=1e-6, weight_decay=0.0, **({"fused": True} if os.environ.get("FUSED") else {}))
batches = qa.peer_batches(o, train, 1)
def step(index):
    index = np.asarray(index)
    loss = model(**qa._torch_tensors(train, index), start_positions=torch.tensor(train.start_positions[index]).long(),
                 end_positions=torch.tensor(train.end_positions[index]).long()).loss
    loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); opt.zero_grad()
for b in batches[:10]: step(b)
t = time.perf_counter()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    for b in batches[10:20]: step(b)
wall = (time.perf_counter() - t) / 10 * 1e3
t = time.perf_counter()
for b in batches[20:30]: step(b)
plain = (time.perf_counter() - t) / 10 * 1e3
avg = prof.key_averages()
rows = sorted(((e.key, e.self_cpu_time_total / 1e3 / 10) for e in avg), key=lambda r: -r[1])
print(f"TORCHPROF wall per step profiled {wall:.0f} ms, unprofiled (steps 20-29) {plain:.0f} ms; self time per step {sum(r[1] for r in rows):.0f} ms")
for k, v in rows[:25]: print(f"TOP {v:8.1f} ms {k}")
json.dump({"self_ms": dict(rows), "wall_ms": wall, "plain_ms": plain}, open("/tmp/stepprof/torch.json", "w"), indent=1)
