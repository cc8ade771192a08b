"""py-spy raw stacks of a suite run: samples by process kind, and inclusive samples per
frame (counted once per stack) within the pytest workers, optionally only stacks matching a
regular expression. Usage: summarize.py stacks.txt [regex] [top]"""
import collections, re, sys

path = sys.argv[1]
pattern = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
top = int(sys.argv[3]) if len(sys.argv) > 3 else 80
incl = collections.Counter(); procs = collections.Counter(); total = worker = 0
for line in open(path, errors="replace"):
    line = line.replace("import sys;exec(eval(sys.stdin.readline()))", "XDIST_WORKER")
    stack, _, count = line.rstrip("\n").rpartition(" ")
    if not count.isdigit():
        continue
    count = int(count)
    frames = stack.split(";")
    pframes = [f for f in frames if f.startswith("process ")]
    if not pframes:
        continue
    last = pframes[-1]
    if "XDIST_WORKER" in last:
        kind = "worker"
    elif len(pframes) == 1:
        kind = "pytest main"
    else:
        kind = "child " + re.sub(r"^process \d+:", "", last)[:110]
    procs[kind] += count
    total += count
    if kind != "worker":
        continue
    worker += count
    if pattern and not re.search(pattern, stack):
        continue
    seen = set()
    for f in frames[len(pframes):]:
        key = re.sub(r":\d+\)$", ")", f)
        if key not in seen:
            seen.add(key)
            incl[key] += count
print("total samples", total, "worker samples", worker)
for k, v in procs.most_common(30):
    print(f"{v:8d} {100*v/total:5.1f}% {k}")
print()
for k, v in incl.most_common(top):
    print(f"{v:8d} {100*v/worker:5.1f}% {k[:170]}")
