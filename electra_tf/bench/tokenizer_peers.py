"""Tokenization alone, by a peer, at a given thread count: one JSON line (`bench prepare`).

    python -m electra_tf.bench.tokenizer_peers --impl hf --threads 2 --vocab V --corpus DIR

Reads the sentences of a "lines" layout corpus (every non-blank line, stripped: what
`prepare` tokenizes) and times only the tokenizer on them:

- `hf`: Hugging Face `tokenizers`' `BertWordPieceTokenizer.encode_batch` (Rust),
  batches of 8,192 sentences, `RAYON_NUM_THREADS` threads (set before the import, so
  each thread count runs in its own process);
- `full`: the reference's Python `FullTokenizer` (`bench.full_tokenizer`), one thread.

`--megabytes` caps the text read (the first sentences).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

__all__ = ["corpus_sentences", "time_tokenizer", "main"]


def corpus_sentences(folder, megabytes: float | None = None) -> list[str]:
    """The non-blank lines (stripped) of the `*.txt` files under `folder`, in name order."""
    budget = None if megabytes is None else int(megabytes * 1e6)
    sentences, size = [], 0
    for path in sorted(Path(folder).rglob("*.txt")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            line = line.strip()
            if line:
                sentences.append(line)
                size += len(line) + 1
                if budget is not None and size >= budget:
                    return sentences
    return sentences


def time_tokenizer(impl: str, vocab_file, sentences: list[str], lower_case: bool = True) -> dict:
    """{tokens, seconds, CPU seconds and their rates} of one peer tokenizing `sentences` once."""
    if impl == "hf":
        from tokenizers import BertWordPieceTokenizer

        tokenizer = BertWordPieceTokenizer(str(vocab_file), lowercase=lower_case)
        started, cpu, tokens = time.perf_counter(), time.process_time(), 0
        for start in range(0, len(sentences), 8192):
            batch = tokenizer.encode_batch(
                sentences[start : start + 8192], add_special_tokens=False
            )
            tokens += sum(len(encoding.ids) for encoding in batch)
    else:
        from electra_tf.bench.full_tokenizer import FullTokenizer, load_vocabulary

        tokenizer = FullTokenizer(load_vocabulary(vocab_file), lower_case, lower_case)
        started, cpu, tokens = time.perf_counter(), time.process_time(), 0
        for sentence in sentences:
            tokens += len(tokenizer.ids(sentence))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "tokens": tokens,
        "seconds": seconds,
        "cpu_s": cpu,  # every thread's
        "tokens_per_s": tokens / seconds,
        "tokens_per_cpu_s": tokens / cpu,
    }


def main(argv=None) -> int:
    """Times one peer (the module docstring) and prints its JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["hf", "full"], required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--vocab", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--megabytes", type=float, default=None)
    args = parser.parse_args(argv)
    if os.environ.get("RAYON_NUM_THREADS") != str(args.threads) and args.impl == "hf":
        raise SystemExit("set RAYON_NUM_THREADS to --threads before starting this process")
    sentences = corpus_sentences(args.corpus, args.megabytes)
    record = time_tokenizer(args.impl, args.vocab, sentences)
    record.update(impl=args.impl, threads=args.threads if args.impl == "hf" else 1)
    record["megabytes"] = round(sum(len(s) + 1 for s in sentences) / 1e6, 2)
    print(json.dumps(record, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
