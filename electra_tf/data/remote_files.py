"""Input on the filesystems Apache Beam reads (gs://, s3://, hdfs://, ...), for `--runner beam`.

A path with a scheme (`scheme://...`) is remote: it is listed, sized and opened through
Beam's `FileSystems`, whichever filesystem its scheme names (one Beam knows: built in,
from an extra such as `apache-beam[gcp]`, or a plugin). Every other path is local and
never comes here: it is read with `open` as before, and a local run needs no Beam.
A remote input names files as a local one does (`corpus.TextSource`):

- a glob (`*` within a folder, `**` across folders, `?`, `[...]`): the files it matches;
- a file: itself;
- otherwise a folder: every file under it (Beam's `folder/**`), the caller keeping the
  text files as it does in a local folder.

Files are sorted as a local folder's are (by path component), so the order, and the
output, do not depend on the filesystem's listing order.

`join`, `write_object`, `read_object`, `list_objects` and `delete_objects` write and read
whole objects there, for a `--runner beam` output on such a filesystem
(`electra_tf.data.beam_output`): an object appears whole when its writer closes.

>>> is_remote("gs://bucket/corpus/*.txt.gz"), is_remote("/data/corpus"), is_remote("c:/x")
(True, False, False)
"""

from __future__ import annotations

import os
import re

from electra_tf.data.documents import CorpusError

__all__ = [
    "BEAM_MISSING",
    "is_remote",
    "refusal",
    "beam_opener",
    "opener_for",
    "list_remote",
    "join",
    "check_writable",
    "write_object",
    "read_object",
    "list_objects",
    "delete_objects",
]

BEAM_MISSING = (
    'Preparing with --runner beam needs Apache Beam: install it with pip install -e ".[beam]" '
    "(or prepare with --runner local)."
)

_SCHEME = re.compile(r"[a-zA-Z][-a-zA-Z0-9+.]*://")  # as Beam's FileSystems.get_scheme
_GLOB = re.compile(r"[*?[]")


def is_remote(path) -> bool:
    """Whether `path` is a string with a scheme (`scheme://...`); `Path`s are local."""
    return isinstance(path, str) and _SCHEME.match(path.strip()) is not None


def refusal(path) -> CorpusError:
    """The one sentence for a remote input given to a run that reads local files only."""
    return CorpusError(
        f"Input {path} is not a local path: only prepare --runner beam reads other "
        "filesystems (gs://, s3://, ... through Apache Beam); prepare it with --runner beam."
    )


def _filesystems():
    try:
        from apache_beam.io.filesystems import FileSystems
    except ImportError:
        raise CorpusError(BEAM_MISSING) from None
    return FileSystems


def beam_opener(path):
    """`(binary file, size)` of `path` through Beam's `FileSystems` (local, gs://, s3://, ...)."""
    from apache_beam.io.filesystems import CompressionTypes, FileSystems

    size = FileSystems.get_filesystem(str(path)).size(str(path))  # no glob: names may hold [
    handle = FileSystems.open(str(path), compression_type=CompressionTypes.UNCOMPRESSED)
    return handle, size


def opener_for(path):
    """`chunks.file_pieces`' opener for `path`: `beam_opener` if it is remote, else None."""
    return beam_opener if is_remote(path) else None


def _match(pattern: str) -> list[tuple[str, int]]:
    """`(path, size)` of every file `pattern` matches (unsorted); a `CorpusError` if unlisted."""
    file_systems = _filesystems()
    try:
        (result,) = file_systems.match([pattern])
    except ValueError:  # no filesystem registered for the scheme
        raise CorpusError(
            f"No Apache Beam filesystem reads {pattern}: install the one for its scheme "
            '(gs://: pip install "apache-beam[gcp]"; s3://: "apache-beam[aws]").'
        ) from None
    except Exception as error:  # noqa: BLE001 - BeamIOError, or the filesystem's own
        details = getattr(error, "exception_details", None) or {}
        cause = next(iter(details.values()), error) if isinstance(details, dict) else error
        reason = (str(cause).strip().splitlines() or [type(cause).__name__])[0][:200]
        raise CorpusError(f"Could not list {pattern} ({reason}).") from None
    return [
        (found.path, found.size_in_bytes)
        for found in result.metadata_list
        if not found.path.endswith("/")  # an object store's folder marker
    ]


def _order(found):
    return found[0].split("/")  # as `Path`s sort: by component


def list_remote(spec: str) -> tuple[str | None, list[tuple[str, int]]]:
    """`(folder, [(path, size)])`: what `spec` names (module docstring), sorted.

    `folder` is the folder's path ending in "/" when `spec` is one (every file under
    it is listed, text or not), else None (a glob, or a file). Nothing found: [].
    """
    if _GLOB.search(spec):
        return None, sorted(_match(spec), key=_order)
    exact = [] if spec.endswith("/") else [f for f in _match(spec) if f[0] == spec]
    if exact:
        return None, exact
    folder = spec.rstrip("/") + "/"
    return folder, sorted(_match(folder + "**"), key=_order)


def join(folder, *names) -> str:
    """`folder/name/...`; on a remote filesystem with "/" (a `Path` folds gs:// into gs:/).

    >>> join("gs://b/out/", "versions", "v1"), join("data", "vocab.txt")
    ('gs://b/out/versions/v1', 'data/vocab.txt')
    """
    if is_remote(str(folder)):
        return "/".join([str(folder).rstrip("/"), *names])
    return os.path.join(folder, *names)


def check_writable(path: str) -> None:
    """A `CorpusError` unless a Beam filesystem is registered for `path`'s scheme."""
    try:
        _filesystems().get_filesystem(path)
    except ValueError:
        raise CorpusError(
            f"No Apache Beam filesystem writes {path}: install the one for its scheme "
            '(gs://: pip install "apache-beam[gcp]"; s3://: "apache-beam[aws]").'
        ) from None


def write_object(path: str, data: bytes) -> None:
    """Writes `data` to the remote `path` through `FileSystems` (replacing it, whole on close)."""
    from apache_beam.io.filesystems import CompressionTypes

    handle = _filesystems().create(path, compression_type=CompressionTypes.UNCOMPRESSED)
    try:
        handle.write(data)
    finally:
        handle.close()


def read_object(path: str) -> bytes:
    """The bytes of the remote `path`, through `FileSystems`."""
    handle = beam_opener(path)[0]
    try:
        return handle.read()
    finally:
        handle.close()


def list_objects(pattern: str) -> list[str]:
    """The remote paths `pattern` (a glob) matches, sorted; [] when none (or unlistable)."""
    try:
        (result,) = _filesystems().match([pattern])
    except Exception:  # noqa: BLE001 - BeamIOError when nothing matches, on some filesystems
        return []
    return sorted(found.path for found in result.metadata_list)


def delete_objects(paths) -> None:
    """Deletes the remote `paths` (none: nothing)."""
    if paths:
        _filesystems().delete(list(paths))
