"""Imbalanced movie-review classification set (issue 55): 5% positives.

Source: vaderSentiment 3.3.2 sdist, additional_resources/hutto_ICWSM_2014.tar.gz,
movieReviewSnippets_GroundTruth.txt (tab-separated: id, mean_rating, text).
Label = sign of mean_rating ("positive" / "negative"); zero ratings dropped; duplicate
texts dropped (first kept) so that no text is in two splits.
Splits (numpy default_rng(0), disjoint): train 1,900 neg + 100 pos, dev 475 neg + 25 pos,
test 1,900 neg + 100 pos; each split shuffled. Written as JSONL {"text", "label"}.
"""

import json
from pathlib import Path

import numpy as np

SRC = Path("/tmp/cls5/raw/hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt")
OUT = Path("/tmp/cls5/data")
SIZES = {"train": (1900, 100), "dev": (475, 25), "test": (1900, 100)}


def read():
    rows, seen, dropped = [], set(), {"zero": 0, "duplicate": 0}
    for line in SRC.read_text(encoding="utf-8").splitlines():
        parts = line.rstrip("\r").split("\t")
        if len(parts) < 3:
            continue
        rating, text = float(parts[1]), "\t".join(parts[2:]).strip()
        if rating == 0:
            dropped["zero"] += 1
            continue
        if text in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(text)
        rows.append({"text": text, "label": "positive" if rating > 0 else "negative"})
    return rows, dropped


def main():
    rng = np.random.default_rng(0)
    rows, dropped = read()
    neg = [r for r in rows if r["label"] == "negative"]
    pos = [r for r in rows if r["label"] == "positive"]
    neg_order, pos_order = rng.permutation(len(neg)), rng.permutation(len(pos))
    lines = [f"source rows kept: {len(rows)} ({len(neg)} negative, {len(pos)} positive); dropped {dropped}"]
    n_at = p_at = 0
    for split, (n_neg, n_pos) in SIZES.items():
        chosen = [neg[i] for i in neg_order[n_at : n_at + n_neg]] + [pos[i] for i in pos_order[p_at : p_at + n_pos]]
        n_at, p_at = n_at + n_neg, p_at + n_pos
        chosen = [chosen[i] for i in rng.permutation(len(chosen))]
        with open(OUT / f"{split}.jsonl", "w") as f:
            for r in chosen:
                f.write(json.dumps(r) + "\n")
        n_p = sum(r["label"] == "positive" for r in chosen)
        words = [len(r["text"].split()) for r in chosen]
        lines.append(f"{split}: {len(chosen)} rows, {n_p} positive ({n_p / len(chosen):.1%}), "
                     f"{len(chosen) - n_p} negative; words per text mean {np.mean(words):.1f} max {max(words)}")
    texts = {s: {json.loads(l)["text"] for l in open(OUT / f"{s}.jsonl")} for s in SIZES}
    lines.append(f"overlaps: train&dev {len(texts['train'] & texts['dev'])}, train&test "
                 f"{len(texts['train'] & texts['test'])}, dev&test {len(texts['dev'] & texts['test'])}")
    Path("/tmp/cls5/make_data.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
