"""Prints each round's pair and the verdict of RULE.md from results.jsonl."""
import json, statistics, pathlib
rows = [json.loads(l) for l in open(pathlib.Path(__file__).with_name("results.jsonl"))]
by = {(r["arm"], r["round"]): r for r in rows}
changes, fewer, same = [], [], []
for n in sorted({r["round"] for r in rows}):
    a, b = by[("A", n)], by[("B", n)]
    ta, tb = a["probe"]["traces"]["one_step_on_data"], b["probe"]["traces"]["one_step_on_data"]
    changes.append(tb["s"] - ta["s"]); fewer.append(tb["ops"] < ta["ops"])
    same.append(a["run"]["dev_f1"] == b["run"]["dev_f1"])
    print(f"round {n}: trace A {ta['s']:.2f} s {ta['ops']} ops, B {tb['s']:.2f} s {tb['ops']} ops, "
          f"B-A {tb['s'] - ta['s']:+.2f}; first batch A {a['probe']['first_batch_s']} B {b['probe']['first_batch_s']}; "
          f"dev F1 A {a['run']['dev_f1']} B {b['run']['dev_f1']}")
median = statistics.median(changes)
kept = median <= -0.2 and all(fewer) and all(same)
print(f"median trace change {median:+.2f} s [{min(changes):+.2f}, {max(changes):+.2f}], n {len(changes)}; "
      f"fewer ops every round {all(fewer)}; dev F1 equal {all(same)}: {'KEPT' if kept else 'REVERTED'}")
