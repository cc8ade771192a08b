"""A test-only Apache Beam filesystem, `memtest://`, over a local folder, as an object store.

`memtest://bucket/key` is the file `bucket/key` under the folder named by the environment
variable `ELECTRA_MEMTEST_ROOT`; listing is by key prefix, recursive, without folders,
as on gs:// or s3://; `create` writes a whole object (visible when closed) and `delete`
removes objects, no rename or copy (as for an output on an object store). Beam's
`FileSystems` finds a filesystem among `FileSystem`'s subclasses by its `scheme()`, so
importing this module registers it, in the process that imports it (the tests run Beam
in that process). `OPENED` lists the paths opened.
"""

import os

from apache_beam.io.filesystem import (
    BeamIOError,
    CompressedFile,
    CompressionTypes,
    FileMetadata,
    FileSystem,
)

SCHEME = "memtest"
PREFIX = SCHEME + "://"
ROOT_VARIABLE = "ELECTRA_MEMTEST_ROOT"
OPENED = []


def local_path(path: str) -> str:
    """The local file behind a `memtest://` path."""
    if not path.startswith(PREFIX):
        raise ValueError(f"not a {PREFIX} path: {path}")
    return os.path.join(os.environ[ROOT_VARIABLE], *path[len(PREFIX) :].split("/"))


class MemtestFileSystem(FileSystem):
    """`memtest://`: read-only, object-store-like paths over `$ELECTRA_MEMTEST_ROOT`."""

    @classmethod
    def scheme(cls):
        return SCHEME

    def join(self, basepath, *paths):
        return "/".join([basepath.rstrip("/"), *paths])

    def split(self, path):
        head, _, tail = path.rpartition("/")
        return head, tail

    def has_dirs(self):
        return False

    def _list(self, dir_or_prefix):
        root = os.environ[ROOT_VARIABLE]
        for folder, _, names in os.walk(root):
            for name in names:
                key = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                if (PREFIX + key).startswith(dir_or_prefix):
                    yield self.metadata(PREFIX + key)

    def open(self, path, mime_type="application/octet-stream", compression_type=None):
        compression = FileSystem._get_compression_type(
            path, compression_type or CompressionTypes.AUTO
        )
        OPENED.append(path)
        raw = open(local_path(path), "rb")
        if compression == CompressionTypes.UNCOMPRESSED:
            return raw
        return CompressedFile(raw, compression_type=compression)

    def exists(self, path):
        return os.path.isfile(local_path(path))

    def size(self, path):
        try:
            return os.path.getsize(local_path(path))
        except OSError as error:
            raise BeamIOError("Size operation failed", {path: error}) from None

    def last_updated(self, path):
        return os.path.getmtime(local_path(path))

    def checksum(self, path):
        return str(self.size(path))

    def metadata(self, path):
        return FileMetadata(path, self.size(path), self.last_updated(path))

    def create(self, path, mime_type="application/octet-stream", compression_type=None):
        return _Upload(local_path(path))

    def delete(self, paths):
        for path in paths:
            try:
                os.remove(local_path(path))
            except OSError as error:
                raise BeamIOError("Delete operation failed", {path: error}) from None

    def _unsupported(self, *_):
        raise BeamIOError(f"{PREFIX} has no folders, copy or rename in the tests")

    mkdirs = copy = rename = _unsupported


class _Upload:
    """A file written aside and moved in place when closed: an object appears whole."""

    def __init__(self, path):
        self.path, self.partial = path, path + ".uploading"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.handle = open(self.partial, "wb")

    def write(self, data):
        return self.handle.write(data)

    def close(self):
        if not self.handle.closed:
            self.handle.close()
            os.replace(self.partial, self.path)
