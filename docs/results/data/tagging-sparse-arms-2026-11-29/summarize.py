"""The screen's table: each arm's runs beside the recorded B (standard) and C (paper) runs
of tagging-sparse-2026-11-28, by seed. python summarize.py > summary.txt"""
import json
from pathlib import Path

HERE = Path(__file__).parent
RECORDED = HERE.parent / "tagging-sparse-2026-11-28" / "results.jsonl"
BAR = 0.412 - 0.003 - 0.022  # B's seed-1 test F1 minus B's and T's spreads (RULE.md)


def rows(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def line(label, r, reading=""):
    epochs = " / ".join(f"{h['f1']:.3f}" for h in r["history"])
    return f"| {label} | {r['seed']} | {epochs} | {r['test_f1']:.3f} | {r.get('seconds', '')} | {reading} |"


print("| arm | seed | dev F1 after epochs 1 / 2 / 3 | test F1 | seconds | by the rule |")
print("|---|---|---|---|---|---|")
recorded = {r["name"]: r for r in rows(RECORDED) if r.get("side") == "ours"}
for name, label in (("ours_std", "B: standard (recorded)"), ("ours_paper", "C: paper (recorded)")):
    for seed in (1, 2, 3):
        if f"{name}_s{seed}" in recorded:
            print(line(label, recorded[f"{name}_s{seed}"]))
seen, by_arm = set(), {}
for r in rows(HERE / "results.jsonl"):
    arm = r["name"].split("_")[1]
    symptom = "all O after epoch 1" if r["history"][0]["f1"] == 0 else ""
    cost = "below the bar" if r["test_f1"] < BAR else ""
    label = f"{arm}: standard + {r['extra'].replace('--set ', '')}"
    if r["name"] in seen:  # a rerun on another machine (RULE.md's check): not counted twice
        label += " (rerun, Intel: the check)"
    else:
        by_arm.setdefault(arm, {})[r["seed"]] = r["test_f1"]
    seen.add(r["name"])
    print(line(label, r, "; ".join(x for x in (symptom, cost) if x)))
print(f"\nbar (RULE.md): test F1 below {BAR:.3f} costs accuracy; dev F1 0.000 after epoch 1 is C's symptom")
base = {r["seed"]: r["test_f1"] for n, r in recorded.items() if n.startswith("ours_std_s")}
print("\n| arm | seeds | test F1 mean | arm - B by seed | mean (SE) |\n|---|---|---|---|---|")
for arm, runs in sorted(by_arm.items()):
    seeds = sorted(runs)
    diffs = [runs[k] - base[k] for k in seeds if k in base]
    mean = sum(diffs) / len(diffs)
    se = (sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1) / len(diffs)) ** 0.5 if len(diffs) > 1 else float("nan")
    print(f"| {arm} | {seeds} | {sum(runs.values()) / len(runs):.3f} | "
          + ", ".join(f"{d:+.3f}" for d in diffs) + f" | {mean:+.3f} ({se:.3f}) |")
