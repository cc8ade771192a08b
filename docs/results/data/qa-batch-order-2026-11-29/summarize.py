"""RULE.md's reading of results.jsonl (Pm and Po, this machine) beside the recorded AMD Pm runs.

python summarize.py [results.jsonl] -> summary.txt and summary.json beside this file."""
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
rows = [json.loads(line) for line in open(sys.argv[1] if len(sys.argv) > 1 else HERE / "results.jsonl")]
recorded = [json.loads(line) for line in open(HERE / "../qa-same-batches-2026-11-29/results.jsonl")]
old_pm = {r["seed"]: r["test_f1"] for r in recorded if r["arm"] == "Pm"}
arms = {a: {r["seed"]: r for r in rows if r["arm"] == a} for a in ("Pm", "Po")}
seeds = sorted(set(arms["Pm"]) & set(arms["Po"]))
diffs = [arms["Po"][s]["test_f1"] - arms["Pm"][s]["test_f1"] for s in seeds]
n = len(diffs)
mean = statistics.mean(diffs) if n else float("nan")
se = statistics.stdev(diffs) / n**0.5 if n > 1 else float("nan")
verdict = (
    "no call (screening)" if n <= 3
    else ("batch order carries the point" if mean > 2 * se and mean > 0.5 else "draw noise at this n")
    + (" (provisional, n = 4)" if n == 4 else "")
)
out = {"pairs": n, "seeds": seeds, "Po_minus_Pm": diffs, "mean": mean, "se": se, "verdict": verdict}
lines = ["seed | Pm test F1 (dev) | Po test F1 (dev) | Po - Pm | loss ep1/ep2 Pm | Po | Pm recorded (AMD)"]
for s in seeds:
    pm, po = arms["Pm"][s], arms["Po"][s]
    loss = lambda r: "/".join(f"{e['loss']:.3f}" for e in r["epochs"])  # noqa: E731
    lines.append(f"{s} | {pm['test_f1']:.2f} ({pm['dev_f1']:.2f}) | {po['test_f1']:.2f} ({po['dev_f1']:.2f}) | "
                 f"{po['test_f1'] - pm['test_f1']:+.2f} | {loss(pm)} | {loss(po)} | {old_pm.get(s, float('nan')):.2f}")
for a in ("Pm", "Po"):
    v = [arms[a][s]["test_f1"] for s in seeds]
    if v:
        out[a] = {"mean": statistics.mean(v), "spread": max(v) - min(v), "best_epochs": [arms[a][s]["best_epoch"] for s in seeds]}
        lines.append(f"{a}: mean {statistics.mean(v):.2f}, spread {max(v) - min(v):.2f}, epochs {out[a]['best_epochs']}")
lines.append(f"Po - Pm: mean {mean:+.2f}, SE {se:.2f}, n {n}: {verdict}")
out["pm_here_vs_recorded"] = {s: arms["Pm"][s]["test_f1"] - old_pm[s] for s in seeds if s in old_pm}
lines.append(f"Pm here - Pm recorded (AMD): {out['pm_here_vs_recorded']}")
(HERE / "summary.txt").write_text("\n".join(lines) + "\n")
(HERE / "summary.json").write_text(json.dumps(out, indent=1) + "\n")
print("\n".join(lines))
