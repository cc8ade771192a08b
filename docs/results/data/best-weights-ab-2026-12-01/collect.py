"""Reads this A/B's sixteen runs (log-WORKLOAD-ARM-ROUND.txt: the bench's record and probe.py's
PHASE lines) into results.jsonl and prints RULE.md's figures and verdict."""
import json, pathlib, re, statistics
here = pathlib.Path(__file__).parent
rows = {}
for log in sorted(here.glob("log-*.txt")):
    workload, arm, rnd = log.stem.split("-")[1:]
    text = log.read_text()
    record = json.loads([l for l in text.splitlines() if l.startswith('{"batch"')][-1])
    phases = {k: float(v) for k, v in re.findall(r"PHASE (\S+): ([\d.]+) s in", text)}
    package = re.search(r"PHASE package (\S+)", text).group(1)
    rows[workload, arm, int(rnd)] = {
        "workload": workload, "arm": arm, "round": int(rnd), "package": package,
        "phases_s": phases, **record}
with open(here / "results.jsonl", "w") as out:
    for key in sorted(rows):
        out.write(json.dumps(rows[key]) + "\n")
score = {"reviews": "dev_accuracy", "qa": "dev_f1"}
rounds = (1, 2, 3, 4)
timed = lambda row: row["phases_s"].get("load_initialization", 0) + row["phases_s"].get("_best_weights", 0)
keep = True
for w in ("reviews", "qa"):
    speed = [rows[w, "B", r]["examples_per_s"] / rows[w, "A", r]["examples_per_s"] for r in rounds]
    cut = [timed(rows[w, "B", r]) - timed(rows[w, "A", r]) for r in rounds]
    same = [rows[w, "B", r][score[w]] == rows[w, "A", r][score[w]] for r in rounds]
    ok = statistics.median(cut) <= -1.0 and statistics.median(speed) >= 0.98 and all(same)
    keep = keep and ok
    print(w, "| timed B-A s", [round(x, 2) for x in cut], "median", round(statistics.median(cut), 2),
          "| examples/s B/A", [round(x, 3) for x in speed], "median", round(statistics.median(speed), 3),
          "| dev equal", same, "| wall A", [rows[w, "A", r]["wall_seconds"] for r in rounds],
          "B", [rows[w, "B", r]["wall_seconds"] for r in rounds], "| passes", ok)
print("verdict:", "B kept" if keep else "B reverted")
