"""Worker samples by test function (or fixture) frame, all and those within a regex frame.
Usage: bytest.py stacks.txt [regex]"""
import collections, re, sys
path = sys.argv[1]; pat = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
allc = collections.Counter(); hit = collections.Counter()
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
    # the outermost frame in a tests/ file: the test or fixture function
    own = [f for f in frames if "/tests/" in f or re.match(r"\S+ \((test_|conftest|helpers)", f)]
    key = re.sub(r":\d+\)$", ")", own[0]) if own else "-"
    c = int(count); allc[key] += c
    if pat and any(pat.search(f) for f in frames):
        hit[key] += c
for k, v in allc.most_common(60):
    print(f"{v/25:7.1f} {hit[k]/25:7.1f} {k[:150]}")
