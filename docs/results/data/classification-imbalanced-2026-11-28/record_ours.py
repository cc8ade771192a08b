"""Appends one results.jsonl line for an ours run (run_ours.sh): the engine's results.json
(best epoch, dev/test accuracy and macro F1, dev history), positive-class F1 and class counts
recomputed from predictions/{dev,test}.jsonl, the log's recipe line and collapse warnings."""
import json
import sys
from pathlib import Path

from sklearn.metrics import accuracy_score, f1_score

name, seed, t0, t1, rc, extra = sys.argv[1:]
out = Path("/tmp/cls5/out")
rec = {"side": "ours", "name": name, "seed": int(seed), "extra": extra, "rc": int(rc),
       "seconds": round(float(t1) - float(t0), 1)}


def scored(split):
    rows = [json.loads(line) for line in open(out / name / "predictions" / f"{split}.jsonl")]
    gold, pred = [r["gold"] for r in rows], [r["label"] for r in rows]
    names = sorted(set(gold))
    return {"accuracy": float(accuracy_score(gold, pred)),
            "macro_f1": float(f1_score(gold, pred, average="macro", labels=names, zero_division=0)),
            "pos_f1": float(f1_score(gold, pred, pos_label="positive", average="binary", zero_division=0)),
            "predicted": {n: sum(p == n for p in pred) for n in names}}


try:
    r = json.load(open(out / name / "results.json"))["runs"][0]
    rec.update(best_epoch=r["best_epoch"], engine_dev=r["dev"], engine_test=r["test"],
               history=[{k: v for k, v in h.items() if not isinstance(v, (dict, list))} for h in r["history"]])
    rec.update(dev=scored("dev"), test=scored("test"))
    rec["dev_collapsed"] = len([v for v in rec["dev"]["predicted"].values() if v]) == 1
except Exception as e:  # a crashed run: macro F1 0 by the rule
    rec["error"] = repr(e)
log = (out / f"{name}.log").read_text(errors="replace").splitlines()
rec["recipe_lines"] = [l for l in log if "recipe" in l.lower() or "defaults" in l.lower()][:4]
rec["collapse_warnings"] = [l for l in log if "has not learned to tell" in l]
print(json.dumps(rec))
open("/tmp/cls5/results.jsonl", "a").write(json.dumps(rec) + "\n")
