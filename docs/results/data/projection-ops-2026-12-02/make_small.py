"""The first 60 questions of the QA bench's train file (qa-speed-2026-11-27/make_subset.py's
train.json): usage python make_small.py TRAIN_JSON OUT_JSON"""
import json, sys

data, n, articles = json.load(open(sys.argv[1])), 0, []
for article in data["data"]:
    paragraphs = []
    for p in article["paragraphs"]:
        if n >= 60:
            break
        paragraphs.append(p)
        n += len(p["qas"])
    if paragraphs:
        articles.append({**article, "paragraphs": paragraphs})
    if n >= 60:
        break
json.dump({**data, "data": articles}, open(sys.argv[2], "w"))
