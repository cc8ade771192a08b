"""Reads the twelve runs of this A/B (log-WORKLOAD-ARM-ROUND.txt) with
../fixed-costs-ab-2026-12-01/collect.py's reader, and prints RULE.md's three figures."""
import json, pathlib, statistics
here = pathlib.Path(__file__).parent
reader = (here / "../fixed-costs-ab-2026-12-01/collect.py").read_text()
exec(compile(reader.split("score = ")[0], "collect-reader", "exec"), {"__file__": str(here / "collect.py")})
rows = {(r["workload"], r["arm"], r["round"]): r for r in map(json.loads, open(here / "results.jsonl"))}
score = {"reviews": "dev_accuracy", "qa": "dev_f1"}
def load(r):
    return r["phases_s"].get("load_initialization", 0) + r["phases_s"].get("_best_weights", 0)
for w in ("reviews", "qa"):
    saved = [load(rows[w, "B", k]) - load(rows[w, "A", k]) for k in (1, 2, 3)]
    speed = [rows[w, "B", k]["examples_per_s"] / rows[w, "A", k]["examples_per_s"] for k in (1, 2, 3)]
    same = [rows[w, "B", k][score[w]] == rows[w, "A", k][score[w]] for k in (1, 2, 3)]
    print(w, "| load + best weights B-A s", [round(x, 2) for x in saved], "median", round(statistics.median(saved), 2),
          "| examples/s B/A", [round(x, 3) for x in speed], "median", round(statistics.median(speed), 3),
          "| dev equal", same)
