"""Tables of the imbalanced-classification study from results.jsonl (RULE.md's rule): per seed
dev accuracy / macro F1 per epoch, best epoch, test macro F1, accuracy, positive-class F1, dev
prediction counts; each arm's mean and spread, the rule's threshold, paired differences, collapses."""
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
    ("T: transformers' loop (torch_cls.py)", "torch"),
    ("B: ours, new defaults (standard)", "ours_std"),
    ("C: ours, --set defaults=paper", "ours_paper"),
]


def arm(prefix):
    return {s: R[f"{prefix}_s{s}"] for s in (1, 2, 3) if f"{prefix}_s{s}" in R}


def test(r, key="macro_f1"):
    return r.get("test", {}).get(key, 0.0)  # a crashed run counts as 0 (RULE.md)


def epochs(r):
    hist = r.get("history", [])
    return " ".join(f"{h.get('accuracy', float('nan')):.3f}/{h.get('macro_f1', float('nan')):.3f}" for h in hist)


print("| arm | seed | dev acc/macro F1 per epoch | best epoch | dev predicted pos | test macro F1 | test acc | test pos F1 | collapse warnings | seconds |")
print("|---|---|---|---|---|---|---|---|---|---|")
for label, prefix in ARMS:
    for s, r in sorted(arm(prefix).items()):
        pos = r.get("dev", {}).get("predicted", {}).get("positive", "")
        warn = len(r["collapse_warnings"]) if "collapse_warnings" in r else ""
        print(f"| {label} | {s} | {epochs(r)} | {r.get('best_epoch')} | {pos} | {test(r):.3f} | "
              f"{test(r, 'accuracy'):.3f} | {test(r, 'pos_f1'):.3f} | {warn} | {r['seconds']:.0f} |")
print()
T = arm("torch")
t = np.array([test(T[s]) for s in sorted(T)])
threshold = t.mean() - (t.max() - t.min()) / 2 if len(t) else None
if threshold is not None:
    print(f"T: test macro F1 mean {t.mean():.3f}, spread (max-min) {t.max() - t.min():.3f}, n {len(t)}; "
          f"rule threshold mean - spread/2 = {threshold:.3f}; collapsed seeds "
          f"{[s for s in sorted(T) if T[s].get('dev_collapsed')]}")
for label, prefix in ARMS[1:]:
    ours = arm(prefix)
    if not ours:
        continue
    o = np.array([test(ours[s]) for s in sorted(ours)])
    line = f"{label}: test macro F1 mean {o.mean():.3f}, spread {o.max() - o.min():.3f}, n {len(o)}"
    line += f"; acc mean {np.mean([test(ours[s], 'accuracy') for s in ours]):.3f}"
    line += f"; pos F1 mean {np.mean([test(ours[s], 'pos_f1') for s in ours]):.3f}"
    paired = sorted(set(ours) & set(T))
    if paired:
        d = np.array([test(ours[s]) - test(T[s]) for s in paired])
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        line += f"; paired diff (seeds {paired}) {' '.join(f'{x:+.3f}' for x in d)}, mean {d.mean():+.3f}, SE {se:.3f}"
    bad = [s for s in sorted(ours) if ours[s].get("dev_collapsed", True) and s in T and not T[s].get("dev_collapsed", False)]
    line += f"; collapsed where T does not: seeds {bad}"
    if threshold is not None:
        verdict = "matches" if o.mean() >= threshold and not bad else "does not match"
        line += f" -> {verdict} (n {len(o)} vs T n {len(t)})"
    print(line)
if T:
    print(f"T: test acc mean {np.mean([test(T[s], 'accuracy') for s in T]):.3f}; pos F1 mean "
          f"{np.mean([test(T[s], 'pos_f1') for s in T]):.3f}")
