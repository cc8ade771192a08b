"""Issue 55, QA under the standard defaults: the table and the rule of RULE.md.
Reads (run from /tmp/qa-std): out/ours_sS/results.json (arm S), results.jsonl (arm TD,
the torch_qa.py lines with arm "TD"), out/ours_sS.log and out/td_sS.log (the /usr/bin/time
line), and the recorded arms of ../qa-2026-11-27 beside this file: T (results.jsonl) and P
(ours_sN.json, ours under the paper's recipe). Prints a markdown table and the verdicts;
writes summary.json.
usage: python summarize.py [STUDY_DIR]"""

import json
import os
import re
import statistics as st
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OLD = os.path.join(HERE, "..", "qa-2026-11-27")
study = sys.argv[1] if len(sys.argv) > 1 else "."
SEEDS = (1, 2, 3)


def ours(path):
    run = json.load(open(path))["runs"][0]
    return {
        "best_epoch": run["best_epoch"],
        "dev_f1": run["dev"]["f1"],
        "test_em": run["test"]["exact"],
        "test_f1": run["test"]["f1"],
        "threshold": run["dev"]["threshold"],
    }


def torch_line(r):
    return {
        "best_epoch": r["best_epoch"],
        "dev_f1": r["dev_f1"],
        "test_em": r["test_em"],
        "test_f1": r["test_f1"],
        "threshold": r["epochs"][r["best_epoch"] - 1]["threshold"],
        "wall_s_inner": r["wall_s"],
    }


def wall(log):
    """(wall s, cpu s) of the /usr/bin/time line at the end of a log, or None."""
    try:
        m = re.findall(r"([\d.]+) s wall ([\d.]+)\+([\d.]+) cpu", open(log).read())
    except FileNotFoundError:
        return None
    return (float(m[-1][0]), float(m[-1][1]) + float(m[-1][2])) if m else None


rows = {}
for s in SEEDS:
    p = os.path.join(study, f"out/ours_s{s}/results.json")
    if os.path.exists(p):
        rows[("S", s)] = {**ours(p), "time": wall(os.path.join(study, f"out/ours_s{s}.log"))}
    rows[("P", s)] = ours(os.path.join(OLD, f"ours_s{s}.json"))
if os.path.exists(os.path.join(study, "results.jsonl")):
    for line in open(os.path.join(study, "results.jsonl")):
        r = json.loads(line)
        if r.get("arm") == "TD" and r["warmup"] == 0.0 and r["eps"] == 1e-8:
            rows[("TD", r["seed"])] = {
                **torch_line(r),
                "time": wall(os.path.join(study, f"out/td_s{r['seed']}.log")),
            }
for line in open(os.path.join(OLD, "results.jsonl")):
    r = json.loads(line)
    rows[("T", r["seed"])] = torch_line(r)

NAMES = {
    "S": "S: electra-tf, new standard defaults",
    "TD": "TD: transformers loop, its own defaults (warmup 0, eps 1e-8)",
    "T": "T: transformers loop, recorded (warmup 0.1, eps 1e-6)",
    "P": "P: electra-tf, paper recipe, recorded",
}
print(
    "| seed | arm | best epoch (dev) | dev F1 | test EM | test F1 | threshold (dev) "
    "| wall s (cpu s) |"
)
print("|---|---|---|---|---|---|---|---|")
for s in SEEDS:
    for arm in ("S", "TD", "T", "P"):
        r = rows.get((arm, s))
        if r:
            t = r.get("time")
            ts = f"{t[0]:.0f} ({t[1]:.0f})" if t else "recorded"
            print(
                f"| {s} | {NAMES[arm]} | {r['best_epoch']} | {r['dev_f1']:.2f} "
                f"| {r['test_em']:.2f} | {r['test_f1']:.2f} | {r['threshold']:.3f} | {ts} |"
            )

summary = {"rows": {f"{a}_s{s}": r for (a, s), r in sorted(rows.items())}, "verdicts": {}}
print()
for comp in ("TD", "T", "P"):
    seeds = [s for s in SEEDS if ("S", s) in rows and (comp, s) in rows]
    if not seeds:
        continue
    sv = [rows[("S", s)]["test_f1"] for s in seeds]
    cv = [rows[(comp, s)]["test_f1"] for s in seeds]
    diffs = [a - b for a, b in zip(sv, cv, strict=True)]
    spread = max(cv) - min(cv)
    bar = st.mean(cv) - spread / 2
    v = {
        "seeds": seeds,
        "mean_S": st.mean(sv),
        "spread_S": max(sv) - min(sv),
        "mean_C": st.mean(cv),
        "spread_C": spread,
        "bar": bar,
        "paired_diffs": diffs,
        "mean_diff": st.mean(diffs),
        "se": st.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else None,
    }
    if comp != "P":  # the rule; S against P is descriptive
        v["verdict"] = "matches" if v["mean_S"] >= bar else "falls short"
    summary["verdicts"][comp] = v
    se = f"{v['se']:.2f}" if v["se"] is not None else "n/a"
    print(
        f"S vs {comp} (seeds {seeds}): mean S {v['mean_S']:.2f} "
        f"(spread {v['spread_S']:.2f}), mean {comp} {v['mean_C']:.2f} "
        f"(spread {spread:.2f}), bar {bar:.2f}; paired S-{comp} "
        + ", ".join(f"{d:+.2f}" for d in diffs)
        + f": mean {v['mean_diff']:+.2f}, SE {se}"
        + (f" -> {v['verdict']}" if "verdict" in v else " (descriptive)")
    )
json.dump(summary, open(os.path.join(study, "summary.json"), "w"), indent=1)
