"""Tables of the sparse-label study from results.jsonl (RULE.md's rule): per seed dev / test
entity F1, each arm's mean and spread, the rule's threshold, paired differences, collapses."""
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
R = {}
for line in open(HERE / "results.jsonl"):
    r = json.loads(line)
    R[r["name"]] = r  # a re-run replaces an earlier line of the same name
ARMS = [
    ("T: transformers' loop (torch_ner.py --group 0)", "torch_std"),
    ("B: ours, standard recipe", "ours_std"),
    ("C: ours, paper recipe (today's defaults)", "ours_paper"),
    ("B + group_by_length=true", "ours_std_group"),
    ("B + warmup_fraction=0.1", "ours_std_wu01"),
    ("B + adam_epsilon=1e-6", "ours_std_eps6"),
]


def arm(prefix):
    return {s: R[f"{prefix}_s{s}"] for s in (1, 2, 3) if f"{prefix}_s{s}" in R}


def dev_entities(name):
    """Entity tags the kept model predicted on dev (ours only; None if not recorded)."""
    path = HERE / "out" / name / "predictions" / "dev.jsonl"
    if not path.exists():
        return None
    count = 0
    for line in open(path):
        row = json.loads(line)
        tags = row.get("tags") or row.get("labels") or []
        count += sum(1 for t in tags if isinstance(t, str) and t not in ("O", ""))
    return count


torch = arm("torch_std")
t = np.array([torch[s]["test_f1"] for s in sorted(torch)])
threshold = t.mean() - (t.max() - t.min()) / 2 if len(t) else None
print("| arm | seed | dev F1 per epoch | best epoch | dev F1 | test F1 | dev entity tags | seconds |")
print("|---|---|---|---|---|---|---|---|")
for label, prefix in ARMS:
    for s, r in sorted(arm(prefix).items()):
        hist = " ".join(f"{h['f1']:.3f}" for h in r.get("history", []))
        ents = dev_entities(r["name"]) if r["side"] == "ours" else None
        print(f"| {label} | {s} | {hist} | {r.get('best_epoch')} | {r.get('dev_f1', 0):.3f} | "
              f"{r.get('test_f1', 0):.3f} | {'' if ents is None else ents} | {r['seconds']:.0f} |")
print()
if threshold is not None:
    print(f"T: test mean {t.mean():.3f}, spread (max-min) {t.max() - t.min():.3f}, n {len(t)}; "
          f"rule threshold mean - spread/2 = {threshold:.3f}")
for label, prefix in ARMS[1:]:
    ours = arm(prefix)
    if not ours:
        continue
    o = np.array([ours[s].get("test_f1", 0.0) for s in sorted(ours)])
    line = f"{label}: test mean {o.mean():.3f}, spread {o.max() - o.min():.3f}, n {len(o)}"
    paired = sorted(set(ours) & set(torch))
    if paired:
        d = np.array([ours[s].get("test_f1", 0.0) - torch[s]["test_f1"] for s in paired])
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        line += f"; paired diff (seeds {paired}) mean {d.mean():+.3f}, SE {se:.3f}"
    collapsed = [s for s in sorted(ours) if ours[s].get("dev_f1", 0) == 0]
    line += f"; collapsed seeds {collapsed}"
    if threshold is not None:
        verdict = "matches" if o.mean() >= threshold and not collapsed else "does not match"
        line += f" -> {verdict} (n {len(o)} vs T n {len(t)})"
    print(line)
