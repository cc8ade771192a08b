"""py-spy raw stacks of a suite run: samples by process kind, and inclusive samples per
frame (counted once per stack) within the pytest workers, optionally only stacks matching a
regular expression. Usage: summarize.py stacks.txt [regex] [top]"""
import collections, re, sys

from stacks import frame_key, read

path = sys.argv[1]
pattern = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
top = int(sys.argv[3]) if len(sys.argv) > 3 else 80
incl = collections.Counter(); procs = collections.Counter(); total = worker = 0
for kind, frames, count in read(path):
    procs[kind] += count
    total += count
    if kind != "worker":
        continue
    worker += count
    if pattern and not re.search(pattern, ";".join(frames)):
        continue
    for key in dict.fromkeys(frame_key(f) for f in frames):
        incl[key] += count
print("total samples", total, "worker samples", worker)
for k, v in procs.most_common(30):
    print(f"{v:8d} {100*v/total:5.1f}% {k}")
print()
for k, v in incl.most_common(top):
    print(f"{v:8d} {100*v/worker:5.1f}% {k[:170]}")
