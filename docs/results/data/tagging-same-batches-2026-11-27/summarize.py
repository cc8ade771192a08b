"""Prints the same-batches table and the paired rule's verdict from results.jsonl."""
import json, math, pathlib, statistics as st

rows = [json.loads(l) for l in pathlib.Path(__file__).with_name("results.jsonl").read_text().splitlines()]
runs = {r["seed"]: r for r in rows if "ours" in r and "torch" in r and "test_f1" in r["ours"][-1]}
diffs = []
print("| seed | ours: best epoch, dev / test | PyTorch: best epoch, dev / test | ours - PyTorch (test) |")
print("|---|---|---|---|")
for seed in sorted(runs):
    pick = {}
    for side in ("ours", "torch"):
        best = max(runs[seed][side], key=lambda h: h["f1"])  # chosen on dev
        pick[side] = best
    d = pick["ours"]["test_f1"] - pick["torch"]["test_f1"]
    diffs.append(d)
    o, t = pick["ours"], pick["torch"]
    print(f"| {seed} | {o['epoch']}: {o['f1']:.3f} / {o['test_f1']:.3f} | {t['epoch']}: {t['f1']:.3f} / {t['test_f1']:.3f} | {d:+.3f} |")
mean, se = st.mean(diffs), st.stdev(diffs) / math.sqrt(len(diffs))
for side in ("ours", "torch"):
    tests = [max(runs[s][side], key=lambda h: h["f1"])["test_f1"] for s in sorted(runs)]
    print(f"{side}: test mean {st.mean(tests):.3f} +- {st.stdev(tests):.3f} (sd, n={len(tests)})")
print(f"paired mean {mean:+.3f}, SE {se:.3f}: {'matches' if mean >= -2 * se else 'worse'} (rule: mean >= -2 SE)")
