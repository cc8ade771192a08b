"""Reads the twelve runs (log-WORKLOAD-ARM-ROUND.txt: the bench's record and probe.py's PHASE
lines) into results.jsonl and prints the rule's figures."""
import json, pathlib, re, statistics
here = pathlib.Path(__file__).parent
rows = {}
for log in sorted(here.glob("log-*.txt")):
    workload, arm, rnd = log.stem.split("-")[1:]
    text = log.read_text()
    record = json.loads([l for l in text.splitlines() if l.startswith('{"batch"')][-1])
    first = re.search(r"first batch \(trace\+step\) ([\d.]+); median later gap ([\d.]+)", text)
    traces = dict(re.findall(r"PHASE trace (\S+): ([\d.]+) s", text))
    rows[workload, arm, int(rnd)] = {
        "workload": workload, "arm": arm, "round": int(rnd), "meta_optimizer": arm == "A",
        "first_batch_s": float(first.group(1)), "median_batch_gap_s": float(first.group(2)),
        "trace_s": {k: float(v) for k, v in traces.items()}, **record}
with open(here / "results.jsonl", "w") as out:
    for key in sorted(rows):
        out.write(json.dumps(rows[key]) + "\n")
for w in ("reviews", "qa"):
    speed = [rows[w, "B", r]["examples_per_s"] / rows[w, "A", r]["examples_per_s"] for r in (1, 2, 3)]
    gap = [rows[w, "B", r]["median_batch_gap_s"] / rows[w, "A", r]["median_batch_gap_s"] for r in (1, 2, 3)]
    print(w, "examples/s B/A", [round(x, 3) for x in speed], "median", round(statistics.median(speed), 3),
          "| batch gap B/A", [round(x, 3) for x in gap], "median", round(statistics.median(gap), 3))
