"""Paired test F1 (ours - PyTorch) by seed, and the rule of RULE.md. Reads out/ours_sS/results.json
and results.jsonl (PyTorch). Prints a markdown table and the verdict; writes summary.json."""
import json, statistics as st
rows = {}
for line in open("results.jsonl"):
    r = json.loads(line)
    rows[("pytorch", r["seed"])] = {"best_epoch": r["best_epoch"], "dev_f1": r["dev_f1"], "test_em": r["test_em"],
                                   "test_f1": r["test_f1"], "threshold": r["epochs"][r["best_epoch"] - 1]["threshold"],
                                   "train_s": sum(0 for _ in [0]) + r["epochs"][-1]["train_s"]}
for s in (1, 2, 3):
    try:
        run = json.load(open(f"out/ours_s{s}/results.json"))["runs"][0]
    except FileNotFoundError:
        continue
    rows[("ours", s)] = {"best_epoch": run["best_epoch"], "dev_f1": run["dev"]["f1"], "test_em": run["test"]["exact"],
                        "test_f1": run["test"]["f1"], "threshold": run["dev"]["threshold"]}
print("| seed | implementation | best epoch (dev) | dev F1 | test EM | test F1 | threshold (dev) |")
print("|---|---|---|---|---|---|---|")
for (side, s), r in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    name = "electra-tf" if side == "ours" else "transformers BertForQuestionAnswering"
    print(f"| {s} | {name} | {r['best_epoch']} | {r['dev_f1']:.2f} | {r['test_em']:.2f} | {r['test_f1']:.2f} | {r['threshold']:.3f} |")
seeds = [s for s in (1, 2, 3) if ("ours", s) in rows and ("pytorch", s) in rows]
diffs = [rows[("ours", s)]["test_f1"] - rows[("pytorch", s)]["test_f1"] for s in seeds]
summary = {"seeds": seeds, "paired_test_f1_diffs": diffs}
for side in ("ours", "pytorch"):
    v = [rows[(side, s)]["test_f1"] for s in seeds]
    if v:
        summary[side] = {"test_f1_mean": st.mean(v), "test_f1_std": st.stdev(v) if len(v) > 1 else None,
                         "min": min(v), "max": max(v)}
if len(diffs) > 1:
    mean, se = st.mean(diffs), st.stdev(diffs) / len(diffs) ** 0.5
    verdict = "better" if mean > 2 * se else ("matches" if mean >= -2 * se or mean >= -2.0 else "worse")
    summary.update(mean_diff=mean, se=se, verdict=verdict)
    print(f"\npaired test F1 ours - PyTorch: mean {mean:+.2f}, SE {se:.2f} (n={len(diffs)}): {verdict}")
print(json.dumps(summary, indent=1))
json.dump(summary, open("summary.json", "w"), indent=1)
