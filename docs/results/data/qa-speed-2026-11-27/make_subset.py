"""The bench's QA files: the first 500 questions of the study's train.json and 200 of its
dev.json (docs/results/data/qa-2026-11-27/make_data.py builds those from CoNLL-2003).
usage: python make_subset.py STUDY_DATA_DIR OUT_DIR"""
import json, sys

source, out = sys.argv[1], sys.argv[2]
for split, n in (("train", 500), ("dev", 200)):
    d = json.load(open(f"{source}/{split}.json"))
    articles, count = [], 0
    for article in d["data"]:
        paragraphs = []
        for p in article["paragraphs"]:
            if count >= n:
                break
            paragraphs.append(p)
            count += len(p["qas"])
        if paragraphs:
            articles.append({**article, "paragraphs": paragraphs})
        if count >= n:
            break
    json.dump({"version": d.get("version", "v2.0"), "data": articles}, open(f"{out}/{split}.json", "w"))
    print(split, count)
