"""The warmup study's figures by RULE.md: run from docs/results/data/qa-warmup-2026-11-29.

HW: hw_sN.json here (each run's results.json). H: seeds 1-28 as
../qa-more-seeds-2026-11-29/summarize.py reads them. T: seeds 6-15 run on this machine
(../qa-more-seeds-2026-11-29/results.jsonl). TD: results.jsonl here. Prints and writes
summary.json.
"""

import json
import math
import os

import numpy as np

MORE = "../qa-more-seeds-2026-11-29"


def f1(path):
    return json.load(open(path))["runs"][0]["test"]["f1"]


H, HW = {}, {}
for s in range(1, 29):
    for path in (f"../qa-head-2026-11-29/head_s{s}.json", f"../qa-draws-2026-11-29/head_s{s}.json",
                 f"{MORE}/h_s{s}.json"):  # fmt: skip
        if os.path.exists(path):
            H[s] = f1(path)
    if os.path.exists(f"hw_s{s}.json"):
        HW[s] = f1(f"hw_s{s}.json")
T = {r["seed"]: r["test_f1"] for r in map(json.loads, open(f"{MORE}/results.jsonl"))}
t = json.load(open(f"{MORE}/summary.json"))["T"]
T_ALL = dict(zip(t["seeds"], t["test_f1"]))  # the 18 seeds of the more-seeds study
TD = {r["seed"]: r["test_f1"] for r in map(json.loads, open("results.jsonl"))}


def stats(runs):
    x = np.array([runs[s] for s in sorted(runs)])
    return {"seeds": sorted(runs), "test_f1": [round(float(v), 2) for v in x], "n": len(x),
            "mean": round(float(x.mean()), 2), "sd": round(float(x.std(ddof=1)), 2) if len(x) > 1 else None,
            "min": round(float(x.min()), 2), "max": round(float(x.max()), 2)}  # fmt: skip


def paired(a, b):
    """Decisions 1 and 2: a - b by seed."""
    seeds = sorted(set(a) & set(b))
    d = np.array([a[s] - b[s] for s in seeds])
    mean = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else float("nan")
    if mean > 2 * se:
        verdict = "helps (mean > 2 SE)"
    elif mean - 2 * se <= 0 <= mean + 2 * se:
        verdict = "not the gap: the 2-SE interval holds 0"
    else:
        verdict = "undecided (mean < -2 SE: hurts)"
    return {"seeds": seeds, "differences": [round(float(v), 2) for v in d], "n": len(d),
            "mean": round(mean, 2), "se": round(se, 2), "verdict": verdict}  # fmt: skip


def two_samples(a, b, theirs="transformers' own defaults"):
    """Decision 3: mean(a) - mean(b), SE from both variances."""
    x, y = np.array(list(a.values())), np.array(list(b.values()))
    d = float(x.mean() - y.mean())
    se = math.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
    if d + 2 * se < 0:
        verdict = f"ours worse than {theirs} (D + 2 SE < 0)"
    elif d - 2 * se <= 0 <= d + 2 * se and d > -0.5:
        verdict = "no gap told from zero (interval holds 0, D > -0.5)"
    else:
        verdict = "undecided"
    return {"n": [len(x), len(y)], "D": round(d, 2), "se": round(se, 2),
            "interval": [round(d - 2 * se, 2), round(d + 2 * se, 2)], "verdict": verdict}  # fmt: skip


out = {"arms": {"HW": stats(HW), "H": stats(H), "TD": stats(TD) if TD else None,
                "T_6_15": stats({s: T[s] for s in range(6, 16) if s in T})},
       "decision1_HW_minus_H": paired(HW, H),
       "decision2_TD_minus_T": paired(TD, T) if len(TD) > 1 else None,
       "decision3_H_vs_TD": two_samples(H, TD) if len(TD) > 1 else None,
       "beside_HW_vs_T_all": two_samples(HW, T_ALL, "transformers' loop as recorded (T)") if len(HW) > 1 else None}  # fmt: skip
print(json.dumps(out, indent=1))
json.dump(out, open("summary.json", "w"), indent=1)
