"""Sparse-label CoNLL-2003 subset (issue 55): one entity type kept, the others turned into "O".

train: 1,700 of train (numpy default_rng(0), file order kept); dev: 500 of valid (default_rng(1));
test: the first 1,000 test sentences. -DOCSTART- lines dropped; files written as "word tag".
The kept type is the one whose share of train words (B-/I- of that type) is closest to 5%.
"""
import sys
from collections import Counter

import numpy as np

SRC = sys.argv[1] if len(sys.argv) > 1 else "whl/neuroner/data/conll2003/en"


def read(p):
    sents, cur = [], []
    for line in open(p):
        parts = line.split()
        if not parts or parts[0] == "-DOCSTART-":
            if cur:
                sents.append(cur)
                cur = []
        else:
            cur.append((parts[0], parts[-1]))
    if cur:
        sents.append(cur)
    return sents


def keep(sents, etype):
    return [[(w, t if t[2:] == etype else "O") for w, t in s] for s in sents]


def write(p, sents):
    with open(p, "w") as f:
        for s in sents:
            f.write("\n".join(f"{w} {t}" for w, t in s) + "\n\n")


tr, va, te = (read(f"{SRC}/{n}.txt") for n in ("train", "valid", "test"))
print("sentences", len(tr), len(va), len(te))
i = np.sort(np.random.default_rng(0).choice(len(tr), 1700, replace=False))
j = np.sort(np.random.default_rng(1).choice(len(va), 500, replace=False))
tr, va, te = [tr[k] for k in i], [va[k] for k in j], te[:1000]
words = [t for s in tr for _, t in s]
shares = {e: sum(t[2:] == e for t in words) / len(words) for e in ("PER", "ORG", "LOC", "MISC")}
print("train word shares:", {e: round(v, 4) for e, v in shares.items()})
etype = min(shares, key=lambda e: abs(shares[e] - 0.05))
print("kept:", etype)
for n, s in [("train", tr), ("dev", va), ("test", te)]:
    s = keep(s, etype)
    write(f"data/{n}.conll", s)
    c = Counter(t for x in s for _, t in x)
    tagged = sum(v for k, v in c.items() if k != "O")
    ents = c.get("B-" + etype, 0)
    print(n, len(s), "sentences", sum(c.values()), "words", dict(c), f"tagged {tagged / sum(c.values()):.4f}", "entities", ents)
