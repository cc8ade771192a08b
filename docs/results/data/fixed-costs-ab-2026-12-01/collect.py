"""Reads the twelve runs of this A/B (log-WORKLOAD-ARM-ROUND.txt: the bench's record and probe.py's PHASE
lines) into results.jsonl and prints the rule's figures."""
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
for w in ("reviews", "qa"):
    speed = [rows[w, "B", r]["examples_per_s"] / rows[w, "A", r]["examples_per_s"] for r in (1, 2, 3)]
    same = [rows[w, "B", r][score[w]] == rows[w, "A", r][score[w]] for r in (1, 2, 3)]
    print(w, "examples/s B/A", [round(x, 3) for x in speed], "median", round(statistics.median(speed), 3),
          "| dev equal", same, "| wall A", [rows[w, "A", r]["wall_seconds"] for r in (1, 2, 3)],
          "B", [rows[w, "B", r]["wall_seconds"] for r in (1, 2, 3)])
