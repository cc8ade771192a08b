"""Held-out pre-training text cut at document boundaries, drawn from every corpus in proportion.

Holding out the last packed shard is not clean: the packer splits a document across
consecutive examples, so a shard boundary can fall inside one, and corpora written one
after another leave the last shard to the last corpus alone. `split_documents` works on
documents before anything is packed:

1. near-duplicates are dropped first (a document whose `fold`ed text, case, punctuation
   and whitespace folded, repeats an earlier one's, in any corpus);
2. from each corpus, `round(fraction * n)` of its n remaining documents are held out
   (a seeded draw), so every corpus is represented in proportion;
3. what is left is the training text. No document is on both sides.

`write_lines_corpus` writes either side in the "lines" layout (a sentence per line, a
blank line between documents) and `write_files_corpus` as one file per document, for
`prepare_corpus` to pack; `prepare_split` does the three steps once and packs both sides.

Example:

>>> split = split_documents({"a": ["One.", "one", "Two.", "Three"], "b": ["Four!"]}, 0.5)
>>> split.report["a"]["near_duplicates"], len(split.train) + len(split.held_out)
(1, 4)
>>> sorted(split.report["b"].values())
[0, 0, 1, 1]
"""

from __future__ import annotations

import dataclasses
import json
import os
import unicodedata
from pathlib import Path

import numpy as np

__all__ = [
    "fold",
    "DocumentSplit",
    "split_documents",
    "write_lines_corpus",
    "write_files_corpus",
    "prepare_split",
    "HELD_OUT_FRACTION",
]

#: The share of each source's documents held out by default.
HELD_OUT_FRACTION = 0.05


def fold(text: str) -> str:
    """`text` compared for near-duplicates: NFKC, case-folded, punctuation removed,
    whitespace collapsed.

    >>> fold("  It's   GOOD -- really!") == fold("its good really")
    True
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
    return " ".join(kept.split())


@dataclasses.dataclass
class DocumentSplit:
    """Training and held-out documents, as `(corpus, document)` pairs in corpus order.

    `report[corpus]`: `documents` (read), `near_duplicates` (dropped), `held_out`, `train`.
    """

    train: list
    held_out: list
    report: dict


def split_documents(corpora: dict, fraction: float, seed: int = 0) -> DocumentSplit:
    """Drops near-duplicates, then holds out `fraction` of each corpus's documents.

    Args:
        corpora: corpus name -> documents; a document is its text, or a `(name, text)`
            pair (kept as given, compared by its text).
        fraction: the share of each corpus held out, in [0, 1).
        seed: the draw's seed (each corpus draws from its own stream).

    Raises:
        ConfigError: a fraction outside [0, 1), or a split that leaves either side empty
            (too few documents to hold any out, or to train on any).
    """
    from electra_tf.config import ConfigError

    if not 0 <= fraction < 1:
        raise ConfigError(f"held-out fraction {fraction} must be at least 0 and below 1.")
    seen: set = set()
    train, held_out, report = [], [], {}
    for index, (name, documents) in enumerate(corpora.items()):
        kept = []
        for document in documents:
            key = fold(document[1] if isinstance(document, tuple) else document)
            if key and key not in seen:
                seen.add(key)
                kept.append(document)
        count = int(round(fraction * len(kept)))
        chosen = set(np.random.default_rng([seed, index]).permutation(len(kept))[:count].tolist())
        held_out += [(name, d) for i, d in enumerate(kept) if i in chosen]
        train += [(name, d) for i, d in enumerate(kept) if i not in chosen]
        report[name] = {
            "documents": len(documents),
            "near_duplicates": len(documents) - len(kept),
            "held_out": count,
            "train": len(kept) - count,
        }
    names = ", ".join(corpora)
    if fraction > 0 and not held_out:
        raise ConfigError(
            f"Holding out {fraction:.0%} of {names} leaves nothing held out "
            f"({len(train)} distinct documents): give more documents or a larger fraction."
        )
    if not train:
        raise ConfigError(
            f"Holding out {fraction:.0%} of {names} leaves nothing to train on "
            f"({len(held_out)} distinct documents): give more documents or a smaller fraction."
        )
    return DocumentSplit(train, held_out, report)


def _replace(temporary: Path, target: Path) -> None:
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    temporary.replace(target)


def write_lines_corpus(documents, target) -> Path:
    """`documents` (texts, a sentence per line, or `(corpus, text)` pairs) in the "lines"
    layout at `target`, written atomically; returns `target`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    texts = [d[1] if isinstance(d, tuple) else d for d in documents]
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text("\n\n".join(t.strip("\n") for t in texts) + "\n", encoding="utf-8")
    _replace(temporary, target)
    return target


def write_files_corpus(documents, folder) -> Path:
    """`(corpus, (name, text))` documents as one file per document under `folder` (made
    afresh next to it, then renamed into place); returns `folder`."""
    import shutil

    folder = Path(folder)
    scratch = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for corpus, (name, text) in documents:
        path = scratch / corpus / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    scratch.replace(folder)
    return folder


def prepare_split(
    corpora, report_path, texts: dict, folders: dict, *, layout: str, log=None, **options
) -> dict:
    """Splits, writes and packs both sides once; later calls reuse what is on disk.

    Args:
        corpora: a callable returning `split_documents`' corpora (called only when the
            split is not written yet).
        report_path: the split's report (JSON); its presence means the texts are written.
        texts, folders: "train" and "held-out" -> the text written (a file for "lines",
            a folder for "files") and the prepare folder it is packed into.
        layout: "lines" or "files".
        log: called with the side ("train" or "held-out") before it is packed.
        options: `prepare_corpus` options; without `vocab_file`, the training side learns
            a vocabulary and the held-out side is packed with it.

    Returns:
        The split's report (`DocumentSplit.report`).
    """
    from electra_tf.data.corpus import TextSource
    from electra_tf.data.prepare import prepare_corpus

    report_path = Path(report_path)
    if not report_path.exists():
        write = write_lines_corpus if layout == "lines" else write_files_corpus
        split = split_documents(corpora(), HELD_OUT_FRACTION)
        write(split.train, texts["train"])
        write(split.held_out, texts["held-out"])
        report_path.write_text(json.dumps(split.report, indent=2) + "\n")
    for side in ("train", "held-out"):
        if (Path(folders[side]) / "manifest.json").exists():
            continue
        if log is not None:
            log(side)
        vocab_file = options.get("vocab_file")
        if vocab_file is None and side == "held-out":
            vocab_file = str(Path(folders["train"]) / "vocab.txt")
        prepare_corpus(
            [TextSource([str(texts[side])], layout=layout)],
            folders[side],
            **{**options, "vocab_file": vocab_file, "examples_per_shard": 1000},
        )
    return json.loads(report_path.read_text())
