"""Worker samples by test function (or fixture) frame, all and those within a regex frame.
Usage: bytest.py stacks.txt [regex]"""
import collections, re, sys

from stacks import frame_key, read

path = sys.argv[1]; pat = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
allc = collections.Counter(); hit = collections.Counter()
for kind, frames, count in read(path):
    if kind != "worker":
        continue
    # the outermost frame in a tests/ file: the test or fixture function
    own = [f for f in frames if "/tests/" in f or re.match(r"\S+ \((test_|conftest|helpers)", f)]
    key = frame_key(own[0]) if own else "-"
    allc[key] += count
    if pat and any(pat.search(f) for f in frames):
        hit[key] += count
for k, v in allc.most_common(60):
    print(f"{v/25:7.1f} {hit[k]/25:7.1f} {k[:150]}")
