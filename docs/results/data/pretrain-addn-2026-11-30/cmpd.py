import json, sys
def load(p):
    L = [json.loads(l) for l in open(p)]
    return L[0]["names"], {r["step"]: r["crcs"] for r in L[1:]}
na, a = load(sys.argv[1]); nb, b = load(sys.argv[2])
assert na == nb
for s in sorted(set(a) & set(b)):
    d = [na[i] for i, (x, y) in enumerate(zip(a[s], b[s])) if x != y]
    if d:
        print("first step with differing variables:", s, len(d), "of", len(na)); print(d[:20]); break
else:
    print("equal at all", len(set(a) & set(b)), "steps")
