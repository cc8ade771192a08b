"""Table of the head-init arm (RULE.md): run from docs/results/data/qa-head-init-2026-11-29.

Reads this folder's hn_sN.json / h_sN.json (each run's results.json), H's recorded seeds
(../qa-head-2026-11-29/head_s1-3.json, ../qa-draws-2026-11-29/head_s4-5.json), S's
(../qa-standard-2026-11-28/ours_sN.json) and T's (../qa-draws-2026-11-29/summary.json);
prints the rule's figures and writes summary.json.
"""
import json
import math
import os

import numpy as np


def f1(path):
    return json.load(open(path))["runs"][0]["test"]["f1"]


arms = {"HN": {}, "H here": {}, "H": {}, "S": {}}
for s in range(1, 6):
    for arm, path in (("HN", f"hn_s{s}.json"), ("H here", f"h_s{s}.json"),
                      ("H", f"../qa-head-2026-11-29/head_s{s}.json"),
                      ("H", f"../qa-draws-2026-11-29/head_s{s}.json"),
                      ("S", f"../qa-standard-2026-11-28/ours_s{s}.json")):
        if os.path.exists(path):
            arms[arm][s] = f1(path)
t = json.load(open("../qa-draws-2026-11-29/summary.json"))["arms"]["T"]
arms["T"] = dict(zip(t["seeds"], t["test_f1"]))


def paired(a, b):
    seeds = sorted(set(arms[a]) & set(arms[b]))
    d = np.array([arms[a][s] - arms[b][s] for s in seeds])
    se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
    return {"seeds": seeds, "diffs": [round(float(x), 2) for x in d],
            "mean": round(float(d.mean()), 2) if len(d) else None, "se": round(float(se), 2)}


out = {"arms": {}, "paired": {}}
for name, runs in arms.items():
    if not runs:
        continue
    v = [runs[s] for s in sorted(runs)]
    out["arms"][name] = {"seeds": sorted(runs), "test_f1": [round(x, 2) for x in v],
                         "mean": round(float(np.mean(v)), 2), "spread": round(max(v) - min(v), 2)}
    print(f"{name:6} n={len(v)} " + ", ".join(f"s{s} {runs[s]:.2f}" for s in sorted(runs))
          + f"  mean {np.mean(v):.2f} spread {max(v) - min(v):.2f}")
for a, b in (("HN", "H"), ("H here", "H"), ("HN", "T"), ("H", "S"), ("HN", "S")):
    p = paired(a, b)
    if p["seeds"]:
        out["paired"][f"{a}-{b}"] = p
        print(f"{a} - {b}: seeds {p['seeds']} diffs {p['diffs']} mean {p['mean']} SE {p['se']}")
tm = out["arms"]["T"]
bar = round(float(np.mean(list(arms["T"].values()))) - tm["spread"] / 2, 2)
hn = out["arms"].get("HN", {"mean": None, "seeds": []})
out["goal"] = {"bar": bar, "HN_mean": hn["mean"], "n_HN": len(hn["seeds"]),
               "met": hn["mean"] is not None and len(hn["seeds"]) == 5 and hn["mean"] >= bar}
print("goal:", out["goal"])
json.dump(out, open("summary.json", "w"), indent=1)
