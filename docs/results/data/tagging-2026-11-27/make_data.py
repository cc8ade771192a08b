import numpy as np
def read(p):
    sents, cur = [], []
    for line in open(p):
        line = line.rstrip("\n")
        if not line.strip():
            if cur: sents.append(cur); cur = []
        else: cur.append(line)
    if cur: sents.append(cur)
    return sents
def write(p, sents):
    with open(p, "w") as f:
        for s in sents: f.write("\n".join(s) + "\n\n")
tr = read("/tmp/ner-search/conll03_train.txt"); va = read("/tmp/ner-search/conll03_valid.txt"); te = read("/tmp/ner-search/conll03_test.txt")
print(len(tr), len(va), len(te))
i = np.sort(np.random.default_rng(0).choice(len(tr), 1700, replace=False))
j = np.sort(np.random.default_rng(1).choice(len(va), 500, replace=False))
write("data/train.conll", [tr[k] for k in i]); write("data/dev.conll", [va[k] for k in j]); write("data/test.conll", te[:1000])
from collections import Counter
for n, s in [("train", [tr[k] for k in i]), ("dev", [va[k] for k in j]), ("test", te[:1000])]:
    c = Counter(l.split()[-1] for x in s for l in x); print(n, len(s), sum(c.values()), dict(c))
