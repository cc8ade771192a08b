"""One JSON line per run: pytest's result, wall, CPU (user + sys, children included),
peak RSS, and the collector's counts and seconds per generation (gcplug.py)."""
import json, re, sys
from pathlib import Path

out = Path(sys.argv[1])
for run in sorted(out.glob("time-*.txt")):
    arm, rnd = run.stem.split("-")[1:]
    t = run.read_text()
    num = lambda key: float(re.search(re.escape(key) + r": ([\d.]+)", t).group(1))
    wall = t.split("Elapsed (wall clock) time (h:mm:ss or m:ss): ")[1].split()[0].split(":")
    gc_line = (out / f"gc-{arm}-{rnd}.tsv.proc").read_text().split()
    gens = [(int(gc_line[1 + 2 * g]), float(gc_line[2 + 2 * g])) for g in range(3)]
    tail = (out / f"pytest-{arm}-{rnd}.log").read_text().strip().splitlines()[-1]
    print(json.dumps({
        "arm": arm, "round": int(rnd), "result": tail,
        "wall_s": round(float(wall[-2]) * 60 + float(wall[-1]), 2),
        "cpu_s": round(num("User time (seconds)") + num("System time (seconds)"), 2),
        "max_rss_kb": int(num("Maximum resident set size (kbytes)")),
        "gc": {f"gen{g}": {"n": n, "s": round(s, 3)} for g, (n, s) in enumerate(gens)},
        "gc_s": round(sum(s for _, s in gens), 3),
    }))
