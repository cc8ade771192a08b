"""Issue 55, QA same batches with the transformers-style head: the table and RULE.md's rule.
Reads results.jsonl beside this file (arms Pm, Pu of same_batches_qa.py) and the recorded
arms: H (../qa-head-2026-11-29/head_sS.json and .log: ours, the runs whose batches Pm/Pu were
given) and T (../qa-2026-11-27/results.jsonl: transformers' own loop, its own batches).
Prints a markdown table and the verdicts; writes summary.json and summary.txt here.
usage: python summarize.py"""

import json
import os
import re
import statistics as st

HERE = os.path.dirname(os.path.abspath(__file__))
HEAD = os.path.join(HERE, "..", "qa-head-2026-11-29")
OLD = os.path.join(HERE, "..", "qa-2026-11-27")
SEEDS = (1, 2, 3)
NAMES = {
    "H": "H: ours, transformers-style head (recorded, qa-head)",
    "Pm": "Pm: PyTorch on ours' batches, padding masked in the loss",
    "Pu": "Pu: PyTorch on ours' batches, transformers' unmasked loss",
    "T": "T: transformers loop, its own batches (recorded)",
}


def ours(seed):
    """Arm H's row for a seed (its results.json, the epoch best on dev) with its seconds."""
    run = json.load(open(os.path.join(HEAD, f"head_s{seed}.json")))["runs"][0]
    m = re.findall(r"([\d.]+) s wall ([\d.]+)\+([\d.]+) cpu",
                   open(os.path.join(HEAD, f"head_s{seed}.log")).read())
    return {"best_epoch": run["best_epoch"], "dev_f1": run["dev"]["f1"],
            "test_em": run["test"]["exact"], "test_f1": run["test"]["f1"],
            "threshold": run["dev"]["threshold"],
            "time": (float(m[-1][0]), float(m[-1][1]) + float(m[-1][2])) if m else None}


def paired(a, b, rows):
    """(differences a - b by seed, mean, SE) over the seeds both arms have."""
    d = [rows[(a, s)]["test_f1"] - rows[(b, s)]["test_f1"] for s in SEEDS
         if (a, s) in rows and (b, s) in rows]
    if not d:
        return d, None, None
    se = st.stdev(d) / len(d) ** 0.5 if len(d) > 1 else None
    return d, st.mean(d), se


rows = {}
for s in SEEDS:
    rows[("H", s)] = ours(s)
for line in open(os.path.join(OLD, "results.jsonl")):
    r = json.loads(line)
    if r.get("side") == "pytorch" and r["seed"] in SEEDS and ("T", r["seed"]) not in rows:
        best = r["epochs"][r["best_epoch"] - 1]
        rows[("T", r["seed"])] = {**{k: r[k] for k in ("best_epoch", "dev_f1", "test_em",
                                                      "test_f1")},
                                  "threshold": best["threshold"], "time": None}
path = os.path.join(HERE, "results.jsonl")
for line in open(path) if os.path.exists(path) else []:
    r = json.loads(line)
    rows[(r["arm"], r["seed"])] = {**{k: r[k] for k in ("best_epoch", "dev_f1", "test_em",
                                                       "test_f1", "threshold")},
                                   "time": (r["wall_s"], r["cpu_s"])}

out = ["| seed | arm | best epoch (dev) | dev F1 | test EM | test F1 | threshold (dev) "
       "| s wall (CPU) |", "|---|---|---|---|---|---|---|---|"]
for s in SEEDS:
    for a in ("H", "Pm", "Pu", "T"):
        r = rows.get((a, s))
        if r is None:
            continue
        t = f"{r['time'][0]:,.0f} ({r['time'][1]:,.0f})" if r["time"] else "recorded"
        out.append(f"| {s} | {NAMES[a]} | {r['best_epoch']} | {r['dev_f1']:.2f} | "
                   f"{r['test_em']:.2f} | {r['test_f1']:.2f} | {r['threshold']:.3f} | {t} |")
out.append("")
summary = {"arms": {}, "paired": {}}
for a in ("H", "Pm", "Pu", "T"):
    v = [rows[(a, s)]["test_f1"] for s in SEEDS if (a, s) in rows]
    if v:
        summary["arms"][a] = {"n": len(v), "mean": st.mean(v), "min": min(v), "max": max(v),
                              "spread": max(v) - min(v)}
        out.append(f"{a}: test F1 n = {len(v)}, mean {st.mean(v):.2f} "
                   f"[{min(v):.2f}-{max(v):.2f}] (spread {max(v) - min(v):.2f})")
for a, b in (("Pu", "Pm"), ("H", "Pm"), ("H", "Pu"), ("Pm", "T"), ("Pu", "T"), ("H", "T")):
    d, mean, se = paired(a, b, rows)
    if not d:
        continue
    summary["paired"][f"{a}-{b}"] = {"diffs": d, "mean": mean, "se": se}
    ses = f"{se:.2f}" if se is not None else "n/a"
    out.append(f"paired {a} - {b} by seed: {', '.join(f'{x:+.2f}' for x in d)}; "
               f"mean {mean:+.2f}, SE {ses}")
n = len(summary["paired"].get("Pu-Pm", {}).get("diffs", []))
word = "verdict" if n >= 3 else "screening" if n == 2 else "one seed: no rule"
pu = summary["paired"].get("Pu-Pm")
if pu and pu["se"] is not None:
    mean, se = pu["mean"], pu["se"]
    if mean > 2 * se and mean > 0.5:
        mask = "the mask matters, in transformers' favour (unmasked better)"
    elif -mean > 2 * se and -mean > 0.5:
        mask = "the mask matters, in ours' favour (masked better)"
    else:
        mask = "the mask does not matter by the rule"
    out.append(f"[{word}, n = {n}] Pu - Pm: {mean:+.2f} vs 2 SE {2 * se:.2f} and 0.5 -> {mask}")
    summary["mask"] = mask
hm = summary["paired"].get("H-Pm")
if hm and hm["se"] is not None:
    ok = hm["mean"] >= -2 * hm["se"]
    step = "ours' step matches" if ok else "ours' step falls short"
    out.append(f"[{word}, n = {len(hm['diffs'])}] H - Pm: {hm['mean']:+.2f} vs -2 SE "
               f"{-2 * hm['se']:.2f} -> {step}")
    summary["step"] = step
summary["word"] = word
summary["rows"] = {f"{a} s{s}": r for (a, s), r in rows.items()}
text = "\n".join(out)
print(text)
open(os.path.join(HERE, "summary.txt"), "w").write(text + "\n")
json.dump(summary, open(os.path.join(HERE, "summary.json"), "w"), indent=1)
