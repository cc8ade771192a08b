"""Table of the draws study (RULE.md): run from docs/results/data/qa-draws-2026-11-29.

Reads this folder's results.jsonl (Ph, Po, T seeds 4-5) and head_sN.json (H seeds 4-5),
../qa-same-batches-2026-11-29/results.jsonl (Pm), ../qa-head-2026-11-29/head_sN.json
(H seeds 1-3) and ../qa-2026-11-27/results.jsonl (T seeds 1-3); prints the rule's figures
and writes summary.json.
"""
import json
import math
import os

import numpy as np


def lines(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def h_score(path):
    return json.load(open(path))["runs"][0]["test"]["f1"]


arms = {}
for r in lines("results.jsonl"):
    arms.setdefault(r["arm"], {})[r["seed"]] = r["test_f1"]
for r in lines("../qa-same-batches-2026-11-29/results.jsonl"):
    if r["arm"] == "Pm":
        arms.setdefault("Pm", {})[r["seed"]] = r["test_f1"]
for r in lines("../qa-2026-11-27/results.jsonl"):
    arms.setdefault("T", {})[r["seed"]] = r["test_f1"]
for s in (1, 2, 3):
    arms.setdefault("H", {})[s] = h_score(f"../qa-head-2026-11-29/head_s{s}.json")
for s in (4, 5):
    if os.path.exists(f"head_s{s}.json"):
        arms["H"][s] = h_score(f"head_s{s}.json")


def paired(a, b):
    seeds = sorted(set(arms.get(a, {})) & set(arms.get(b, {})))
    d = np.array([arms[a][s] - arms[b][s] for s in seeds])
    se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
    return {"seeds": seeds, "diffs": [round(float(x), 2) for x in d], "mean": round(float(d.mean()), 2) if len(d) else None,
            "se": round(float(se), 2)}


out = {"arms": {}, "paired": {}}
for name, runs in sorted(arms.items()):
    v = [runs[s] for s in sorted(runs)]
    out["arms"][name] = {"seeds": sorted(runs), "test_f1": [round(x, 2) for x in v],
                         "mean": round(float(np.mean(v)), 2), "spread": round(max(v) - min(v), 2)}
    print(f"{name:3} n={len(v)} " + ", ".join(f"s{s} {runs[s]:.2f}" for s in sorted(runs))
          + f"  mean {np.mean(v):.2f} spread {max(v) - min(v):.2f}")
for a, b in (("Ph", "Pm"), ("Po", "Pm"), ("Ph", "T"), ("Po", "T"), ("H", "T")):
    p = paired(a, b)
    if p["seeds"]:
        out["paired"][f"{a}-{b}"] = p
        print(f"{a} - {b}: seeds {p['seeds']} diffs {p['diffs']} mean {p['mean']} SE {p['se']}")
t, h = out["arms"]["T"], out["arms"]["H"]
bar = t["mean"] - t["spread"] / 2
out["goal"] = {"n_T": len(t["seeds"]), "n_H": len(h["seeds"]), "bar": round(bar, 2), "H_mean": h["mean"],
               "met": h["mean"] >= bar}
print(f"goal: H mean {h['mean']} (n={len(h['seeds'])}) against T's mean - spread/2 = {bar:.2f} "
      f"(n={len(t['seeds'])}): {'met' if h['mean'] >= bar else 'not met'}")
json.dump(out, open("summary.json", "w"), indent=1)
