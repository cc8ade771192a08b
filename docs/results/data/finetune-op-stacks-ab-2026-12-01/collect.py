"""Reads the six runs (log-*.txt: the bench's record; time-*.txt: /usr/bin/time -v) into
results.jsonl and prints the rule's figures."""
import json, pathlib, re, statistics
here = pathlib.Path(__file__).parent
rows = {}
for log in sorted(here.glob("log-*.txt")):
    arm, rnd = log.stem.split("-")[1:]
    record = json.loads([l for l in log.read_text().splitlines() if l.startswith("{")][-1])
    timing = (here / f"time-{arm}-{rnd}.txt").read_text()
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", timing).group(1))
              for k in ("User", "System"))
    rows[arm, int(rnd)] = {"arm": arm, "round": int(rnd), "cpu_s": round(cpu, 2), **record}
with open(here / "results.jsonl", "w") as out:
    for key in sorted(rows):
        out.write(json.dumps(rows[key]) + "\n")
ratios = [rows["B", r]["examples_per_s"] / rows["A", r]["examples_per_s"] for r in (1, 2, 3)]
cpu = [rows["B", r]["cpu_s"] / rows["A", r]["cpu_s"] for r in (1, 2, 3)]
print("examples/s B/A per round", [round(x, 3) for x in ratios], "median",
      round(statistics.median(ratios), 3))
print("CPU B/A per round", [round(x, 3) for x in cpu], "B lower every round", all(x < 1 for x in cpu))
