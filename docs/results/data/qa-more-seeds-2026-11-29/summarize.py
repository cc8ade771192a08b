"""The more-seeds study's figures by RULE.md: run from docs/results/data/qa-more-seeds-2026-11-29.

H: recorded seeds 1-3 (../qa-head-2026-11-29/head_sN.json), 4-5
(../qa-draws-2026-11-29/head_sN.json), new seeds 6-28 (h_sN.json here, each run's
results.json). T: recorded seeds 1-5 (../qa-draws-2026-11-29/summary.json), new seeds 6-18
and the seed-1 check (results.jsonl here). `stage1`: RULE.md's seeds alone (H 1-15, T 1-10). Prints and writes summary.json.
"""

import json
import math
import os

import numpy as np


def f1(path):
    return json.load(open(path))["runs"][0]["test"]["f1"]


H = {}
for s in range(1, 29):
    for path in (f"../qa-head-2026-11-29/head_s{s}.json", f"../qa-draws-2026-11-29/head_s{s}.json",
                 f"h_s{s}.json"):  # fmt: skip
        if os.path.exists(path):
            H[s] = f1(path)
t = json.load(open("../qa-draws-2026-11-29/summary.json"))["arms"]["T"]
T = dict(zip(t["seeds"], t["test_f1"]))
check = None
for line in open("results.jsonl"):
    rec = json.loads(line)
    if rec["seed"] == 1:
        check = rec["test_f1"]
    else:
        T[rec["seed"]] = rec["test_f1"]


def stats(runs):
    x = np.array([runs[s] for s in sorted(runs)])
    return {"seeds": sorted(runs), "test_f1": [round(float(v), 2) for v in x],
            "n": len(x), "mean": round(float(x.mean()), 2), "sd": round(float(x.std(ddof=1)), 2),
            "min": round(float(x.min()), 2), "max": round(float(x.max()), 2)}  # fmt: skip


h, t = stats(H), stats(T)


def rule(hs, ts):
    """RULE.md's D, SE and verdict on the given seeds."""
    hx, tx = np.array([H[s] for s in hs]), np.array([T[s] for s in ts])
    d = hx.mean() - tx.mean()
    se = math.sqrt(hx.var(ddof=1) / len(hx) + tx.var(ddof=1) / len(tx))
    if d + 2 * se < 0:
        verdict = "ours learns worse than transformers' loop (D + 2 SE < 0)"
    elif d - 2 * se <= 0 <= d + 2 * se and d > -0.5:
        verdict = "no gap told from zero at this n (interval holds 0, D > -0.5)"
    else:
        verdict = "undecided at this n"
    return d, se, verdict


d, se, verdict = rule(sorted(H), sorted(T))
d1, se1, verdict1 = rule([s for s in H if s <= 15], [s for s in T if s <= 10])
first5 = {"H": round(float(np.mean([H[s] for s in range(1, 6)])), 2),
          "T": round(float(np.mean([T[s] for s in range(1, 6)])), 2)}  # fmt: skip
bar5 = first5["T"] - (max(T[s] for s in range(1, 6)) - min(T[s] for s in range(1, 6))) / 2
out = {"H": h, "T": t, "D": round(float(d), 2), "SE": round(se, 2),
       "interval_2se": [round(float(d - 2 * se), 2), round(float(d + 2 * se), 2)],
       "verdict": verdict, "n": {"H": len(H), "T": len(T)},
       "stage1": {"D": round(float(d1), 2), "SE": round(se1, 2), "verdict": verdict1},
       "T_seed1_check": {"here": check, "recorded": T.get(1)},
       "goal_n5": {**first5, "bar": round(bar5, 2), "met": first5["H"] >= bar5},
       "bar_all_seeds_information_only": round(t["mean"] - (t["max"] - t["min"]) / 2, 2)}  # fmt: skip
print(json.dumps(out, indent=1))
json.dump(out, open("summary.json", "w"), indent=1)

# Information only (not in the rule): dev F1 of the runs made here, both sides.
dev_h = [json.load(open(f"h_s{s}.json"))["runs"][0]["dev"]["f1"] for s in H if s >= 6]
dev_t = [json.loads(line)["dev_f1"] for line in open("results.jsonl")
         if json.loads(line)["seed"] != 1]  # fmt: skip
out["dev_f1_new_seeds"] = {
    "H s6+": round(float(np.mean(dev_h)), 2), "T s6+": round(float(np.mean(dev_t)), 2)
}
print(out["dev_f1_new_seeds"])
json.dump(out, open("summary.json", "w"), indent=1)
