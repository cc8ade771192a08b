"""Which frames call a given frame (worker stacks only): the frame just above the first match,
and our own (electra_tf / tests) nearest frame above it. Usage: callers.py stacks.txt regex"""
import collections, re, sys
path, pat = sys.argv[1], re.compile(sys.argv[2])
parent = collections.Counter(); ours = collections.Counter(); n = 0
for line in open(path, errors="replace"):
    line = line.replace("import sys;exec(eval(sys.stdin.readline()))", "XDIST_WORKER")
    stack, _, count = line.rstrip("\n").rpartition(" ")
    if not count.isdigit():
        continue
    frames = stack.split(";")
    pf = [f for f in frames if f.startswith("process ")]
    if not pf or "XDIST_WORKER" not in pf[-1]:
        continue
    frames = frames[len(pf):]
    for i, f in enumerate(frames):
        if pat.search(f):
            c = int(count); n += c
            parent[re.sub(r":\d+\)$", ")", frames[i - 1])] += c
            own = [g for g in frames[:i] if "electra_tf/" in g or "/tests/" in g or g.startswith("test_")]
            ours[own[-1] if own else "-"] += c
            break
print("samples", n)
for k, v in parent.most_common(12): print(f"{v:7d} {k[:160]}")
print()
for k, v in ours.most_common(25): print(f"{v:7d} {k[:160]}")
