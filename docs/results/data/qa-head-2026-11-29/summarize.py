"""Issue 55, the QA head one change at a time: the table and the rule of RULE.md.
Reads (run from /tmp/qa-head): out/head_sS/results.json and out/head_sS.log (arm H, and its
/usr/bin/time line); the recorded arms beside this folder: S (../qa-standard-2026-11-28/
ours_sS.json and .log: ours, standard defaults, the reference's answerability head) and T
(../qa-2026-11-27/results.jsonl: transformers' BertForQuestionAnswering loop). Prints a
markdown table and the verdicts; writes summary.json into the study folder.
usage: python summarize.py [STUDY_DIR]"""

import json
import os
import re
import statistics as st
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STD = os.path.join(HERE, "..", "qa-standard-2026-11-28")
OLD = os.path.join(HERE, "..", "qa-2026-11-27")
study = sys.argv[1] if len(sys.argv) > 1 else "."
SEEDS = (1, 2, 3)


def ours(path):
    """The row of one of our runs' results.json (the epoch best on dev)."""
    run = json.load(open(path))["runs"][0]
    return {
        "best_epoch": run["best_epoch"],
        "dev_f1": run["dev"]["f1"],
        "test_em": run["test"]["exact"],
        "test_f1": run["test"]["f1"],
        "threshold": run["dev"]["threshold"],
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
    p = os.path.join(study, f"out/head_s{s}/results.json")
    if os.path.exists(p):
        rows[("H", s)] = {**ours(p), "time": wall(os.path.join(study, f"out/head_s{s}.log"))}
    rows[("S", s)] = {
        **ours(os.path.join(STD, f"ours_s{s}.json")),
        "time": wall(os.path.join(STD, f"ours_s{s}.log")),
    }
for line in open(os.path.join(OLD, "results.jsonl")):
    r = json.loads(line)
    rows[("T", r["seed"])] = {
        "best_epoch": r["best_epoch"],
        "dev_f1": r["dev_f1"],
        "test_em": r["test_em"],
        "test_f1": r["test_f1"],
        "threshold": r["epochs"][r["best_epoch"] - 1]["threshold"],
    }

NAMES = {
    "H": "H: ours, standard defaults, transformers-style head (span loss, null-score rule)",
    "S": "S: ours, standard defaults, answerability head (recorded 2026-11-28)",
    "T": "T: transformers loop (recorded 2026-11-27)",
}
print("| seed | arm | best epoch (dev) | dev F1 | test EM | test F1 | threshold (dev) "
      "| wall s (cpu s) |")  # fmt: skip
print("|---|---|---|---|---|---|---|---|")
for s in SEEDS:
    for arm in ("H", "S", "T"):
        r = rows.get((arm, s))
        if r:
            t = r.get("time")
            ts = f"{t[0]:.0f} ({t[1]:.0f})" if t else "recorded"
            scores = f"{r['test_em']:.2f} | {r['test_f1']:.2f} | {r['threshold']:.3f}"
            print(
                f"| {s} | {NAMES[arm]} | {r['best_epoch']} | {r['dev_f1']:.2f} | {scores} | {ts} |"
            )


def paired(a, b, seeds):
    """Paired a - b test F1 by seed: the differences, their mean and SE."""
    diffs = [rows[(a, s)]["test_f1"] - rows[(b, s)]["test_f1"] for s in seeds]
    se = st.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else None
    return {"diffs": diffs, "mean": st.mean(diffs), "se": se}


summary = {"rows": {f"{a}_s{s}": r for (a, s), r in sorted(rows.items())}}
seeds = [s for s in SEEDS if ("H", s) in rows]
print()
if seeds:
    h = [rows[("H", s)]["test_f1"] for s in seeds]
    t = [rows[("T", s)]["test_f1"] for s in SEEDS]  # T: all three recorded seeds
    bar = st.mean(t) - (max(t) - min(t)) / 2
    verdict = "matches" if st.mean(h) >= bar else "falls short of"
    kind = "decision" if len(seeds) == 3 else "screening (fewer than 3 seeds: no decision)"
    summary["verdict"] = {
        "seeds": seeds, "mean_H": st.mean(h), "spread_H": max(h) - min(h),
        "mean_T": st.mean(t), "spread_T": max(t) - min(t), "bar": bar,
        "verdict": f"H {verdict} T", "kind": kind,
        "H_minus_S": paired("H", "S", seeds), "H_minus_T": paired("H", "T", seeds),
    }  # fmt: skip
    print(f"H (seeds {seeds}): mean {st.mean(h):.2f} (spread {max(h) - min(h):.2f}); "
          f"T mean {st.mean(t):.2f} (spread {max(t) - min(t):.2f}), bar {bar:.3f} -> "
          f"H {verdict} T [{kind}]")  # fmt: skip
    for name in ("H_minus_S", "H_minus_T"):
        p = summary["verdict"][name]
        se = f"{p['se']:.2f}" if p["se"] is not None else "n/a"
        print(f"paired {name.replace('_minus_', ' - ')} by seed: "
              + ", ".join(f"{d:+.2f}" for d in p["diffs"])
              + f"; mean {p['mean']:+.2f}, SE {se}")  # fmt: skip
json.dump(summary, open(os.path.join(study, "summary.json"), "w"), indent=1)
