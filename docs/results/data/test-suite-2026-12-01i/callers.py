"""Which frames call a given frame (worker stacks only): the frame just above the first match,
and our own (electra_tf / tests) nearest frame above it. Usage: callers.py stacks.txt regex"""
import collections, re, sys

from stacks import frame_key, read

path, pat = sys.argv[1], re.compile(sys.argv[2])
parent = collections.Counter(); ours = collections.Counter(); n = 0
for kind, frames, count in read(path):
    if kind != "worker":
        continue
    for i, f in enumerate(frames):
        if pat.search(f):
            n += count
            parent[frame_key(frames[i - 1])] += count
            own = [g for g in frames[:i] if "electra_tf/" in g or "/tests/" in g or g.startswith("test_")]
            ours[own[-1] if own else "-"] += count
            break
print("samples", n)
for k, v in parent.most_common(12): print(f"{v:7d} {k[:160]}")
print()
for k, v in ours.most_common(25): print(f"{v:7d} {k[:160]}")
