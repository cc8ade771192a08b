"""Files and folders that are either wholly written and on disk, or not there at all.

Every artifact this package publishes (checkpoints, prepared data, fine-tuned
models, exports) is written under a scratch name, synced to disk, and then
renamed into place; the folder holding it is synced after the rename, so a
power cut leaves either the old artifact or the new one. A folder replacing another
is swapped in by `publish_folder`, the package's one folder swap (an atomic exchange
where the file system has one, else two renames that `recover_folder` finishes or
undoes at the next start of whatever reads or writes the folder). A folder can carry a
record (`record.json`: the size and SHA-256 of every file in it, written last),
which `verify_record` checks before anything trusts the folder.

Example:

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp()) / "artifact"
>>> scratch = folder.with_name(".artifact.tmp")
>>> scratch.mkdir()
>>> _ = (scratch / "weights.bin").write_bytes(b"\\x00" * 8)
>>> _ = write_record(scratch)
>>> _ = publish_folder(scratch, folder)
>>> verify_record(folder) is None
True
>>> _ = (folder / "weights.bin").write_bytes(b"\\x00" * 7)
>>> verify_record(folder)
'weights.bin has 7 bytes where 8 were written'
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import shutil
from pathlib import Path

__all__ = [
    "RECORD",
    "fsync_path",
    "fsync_tree",
    "write_atomic",
    "read_json",
    "write_record",
    "verify_record",
    "exchange",
    "old_copy",
    "publish_folder",
    "recover_folder",
    "recover_within",
    "publishing",
    "remove_folder",
    "probe_writable",
    "os_reason",
    "digest",
    "NoSpace",
    "ensure_space",
    "variables_bytes",
]

RECORD = "record.json"


def fsync_path(path) -> None:
    """Flushes a file's data, or a folder's entries, to disk."""
    flags = os.O_RDONLY | (os.O_DIRECTORY if Path(path).is_dir() else 0)
    descriptor = os.open(path, flags)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def fsync_tree(folder) -> None:
    """Syncs every file under `folder`, then every folder, deepest first."""
    folders = []
    for root, _, files in os.walk(folder):
        for name in files:
            fsync_path(os.path.join(root, name))
        folders.append(root)
    for root in reversed(folders):
        fsync_path(root)


def write_atomic(path, data: bytes | str) -> Path:
    """Writes `data` to `path` through a synced scratch file renamed into place."""
    path = Path(path)
    scratch = path.with_name(f".{path.name}.tmp")
    payload = data.encode() if isinstance(data, str) else data
    try:
        with open(scratch, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(scratch, path)
    except BaseException as error:
        with contextlib.suppress(OSError):  # a read-only folder refuses even this
            scratch.unlink(missing_ok=True)
        if isinstance(error, OSError) and error.filename in (None, str(scratch)):
            raise OSError(error.errno, error.strerror or str(error), str(path)) from None
        raise
    fsync_path(path.parent)
    return path


def read_json(path) -> dict | None:
    """A JSON file's content, or None when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def digest(path) -> str:
    """The SHA-256 of a file, as hex."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            sha.update(block)
    return sha.hexdigest()


def _files(folder: Path):
    for root, _, names in os.walk(folder):
        for name in sorted(names):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if relative != RECORD and not name.endswith(".tmp"):
                yield relative, path


def write_record(folder) -> Path:
    """Writes `folder/record.json` last: the size and SHA-256 of every other file under it."""
    folder = Path(folder)
    record = {
        name: {"bytes": path.stat().st_size, "sha256": digest(path)}
        for name, path in sorted(_files(folder))
    }
    return write_atomic(folder / RECORD, json.dumps(record, indent=2) + "\n")


def verify_record(folder, required=()) -> str | None:
    """Why `folder` does not match its record (one phrase), or None when it does.

    Args:
        folder: a folder written with `write_record`.
        required: files that must be listed in the record (a record that lost one is
            not trusted).
    """
    folder = Path(folder)
    path = folder / RECORD
    if not path.is_file():
        return f"it has no {RECORD}"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return f"its {RECORD} is not readable JSON"
    if not isinstance(record, dict):
        return f"its {RECORD} is not a record"
    for name in required:
        if name not in record:
            return f"its {RECORD} does not list {name}"
    for name, expected in record.items():
        file = folder / name
        if not file.is_file():
            return f"{name} is missing"
        size = file.stat().st_size
        if size != expected.get("bytes"):
            return f"{name} has {size:,} bytes where {expected.get('bytes', 0):,} were written"
        if digest(file) != expected.get("sha256"):
            return f"{name} differs from what was written"
    return None


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(first, second) -> bool:
    """Swaps two paths in one atomic rename; False where the system cannot (nothing moved)."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), os.fspath(first))


def old_copy(final) -> Path:
    """Where a swap keeps the folder it replaces between its two renames: `.<name>.old`."""
    final = Path(final)
    return final.with_name(f".{final.name}.old")


def publish_folder(scratch, final) -> Path:
    """Moves a finished scratch folder to `final`, synced, replacing what was there.

    The scratch folder's files are synced before the swap and the parent folder
    after it. An existing `final` is exchanged with the scratch folder in one
    `renameat2(RENAME_EXCHANGE)` call where the file system has it (Linux ext4,
    xfs, btrfs, tmpfs), so readers see the old folder or the new one and nothing in
    between; the old one, now under the scratch name, is then deleted. Elsewhere it
    is renamed to `.<name>.old` first and deleted once the new folder is in place;
    a kill between those two renames leaves only `.<name>.old`, which
    `recover_folder` puts back at the next start of whatever reads or writes `final`.
    """
    scratch, final = Path(scratch), Path(final)
    fsync_tree(scratch)
    recover_folder(final)  # an earlier swap killed between its renames
    if final.exists() and exchange(scratch, final):
        fsync_path(final.parent)
        shutil.rmtree(scratch, ignore_errors=True)
        return final
    old = old_copy(final)
    moved = final.exists()
    if moved:
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    try:
        os.replace(scratch, final)
    except BaseException:
        if moved:  # put the previous folder back
            os.replace(old, final)
        raise
    fsync_path(final.parent)
    shutil.rmtree(old, ignore_errors=True)
    return final


def recover_folder(final) -> str | None:
    """Finishes or undoes a `publish_folder` that was killed between its two renames.

    Returns "restored" (the old folder was put back under `final`), "cleared" (the new
    one was in place; the leftover old copy was deleted) or None (nothing to do). A
    writer calls it before it publishes (under its lock where it has one); readers call
    it before they look for the folder.
    """
    final = Path(final)
    old = old_copy(final)
    if not old.is_dir():
        return None
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        return "cleared"
    os.replace(old, final)
    fsync_path(final.parent)
    return "restored"


def recover_within(folder, depth: int = 1) -> None:
    """`recover_folder` for `folder` and for every folder a swap left under it, `depth`
    levels down (a run's `model/`, an export's version folders); a folder that cannot be
    written is left as it is (what reads it then says what is missing)."""
    folder = Path(folder)
    with contextlib.suppress(OSError):
        recover_folder(folder)
        if depth <= 0 or not folder.is_dir():
            return
        for child in sorted(folder.iterdir()):
            name = child.name
            if name.startswith(".") and name.endswith(".old") and child.is_dir():
                recover_folder(child.with_name(name[1 : -len(".old")]))
            elif not name.startswith(".") and child.is_dir() and depth > 1:
                recover_within(child, depth - 1)


@contextlib.contextmanager
def publishing(final):
    """Yields an empty scratch folder beside `final`, published there (synced) on success.

    On any error the scratch folder is removed, and so are the parent folders this
    call created, and the error goes on: nothing half-written is left, and an existing
    `final` stays as it was.
    """
    final = Path(final)
    scratch = final.with_name(f".{final.name}.tmp")
    created = [p for p in (final.parent, *final.parent.parents) if not p.exists()]
    shutil.rmtree(scratch, ignore_errors=True)
    if not created:
        recover_folder(final)  # a swap killed between its renames: the old folder back first
    try:
        scratch.mkdir(parents=True)
        yield scratch
        publish_folder(scratch, final)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        for folder in created:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def remove_folder(folder) -> None:
    """Deletes `folder` by first renaming it (synced) to `.<name>.deleting`.

    A power cut or a kill mid-deletion then leaves no half-deleted folder under the
    old name, where a reader would take it for a damaged one.
    """
    folder = Path(folder)
    if not folder.exists():
        return
    doomed = folder.with_name(f".{folder.name}.deleting")
    shutil.rmtree(doomed, ignore_errors=True)
    os.replace(folder, doomed)
    fsync_path(folder.parent)
    shutil.rmtree(doomed, ignore_errors=True)


def probe_writable(folder) -> Path:
    """Creates `folder` (and its parents) and writes, syncs and removes a small file there.

    Raises:
        OSError: the folder cannot be created or written (read-only, full, no permission);
            the folders this call created are removed again.
    """
    folder = Path(folder)
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    probe = folder / f".write-probe-{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as handle:
            handle.write(b"\0" * 4096)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        probe.unlink(missing_ok=True)
        for path in created:  # deepest first
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    probe.unlink()
    return folder


#: The reasons a disk gives, found in the message of a library's error (TensorFlow's
#: `{{function_node __wrapped__SaveV2...}} ...: No space left on device`).
_DISK_REASONS = ("No space left on device", "Disk quota exceeded", "Read-only file system",
                 "Permission denied")  # fmt: skip


def os_reason(error: BaseException) -> str:
    """The short reason an I/O error gives (`strerror`, the disk's reason inside a library's
    message, or the first line of its message).

    >>> os_reason(OSError(28, "No space left on device"))
    'No space left on device'
    >>> os_reason(OSError("{{function_node __wrapped__SaveV2}} a/b; No space left on device"))
    'No space left on device'
    """
    reason = getattr(error, "strerror", None) or getattr(error, "message", None) or str(error)
    known = [text for text in _DISK_REASONS if text in str(reason)]
    if known and not getattr(error, "strerror", None):
        return known[0]
    lines = str(reason).strip().splitlines() or [type(error).__name__]
    return lines[0][:200]


#: Room kept free beyond a write's estimate (file-system blocks, h5 and zip overhead).
SPACE_MARGIN = 16 * 2**20


class NoSpace(OSError):
    """A write refused before it started: its file system has too little room."""

    def __init__(self, folder, needed: int, free: int):
        reason = f"No space left on device: about {_size(needed)} needed, {_size(free)} free"
        super().__init__(errno.ENOSPC, reason, str(folder))
        self.needed, self.free = needed, free


def _size(count: int) -> str:
    """A byte count in KB under a megabyte, else in MB.

    >>> _size(120 * 2**10), _size(16 * 2**20)
    ('120 KB', '16 MB')
    """
    return f"{count / 2**20:.0f} MB" if count >= 2**20 else f"{count / 2**10:.0f} KB"


def ensure_space(folder, needed: int) -> None:
    """Raises `NoSpace` when the file system of `folder` has less room than a write of
    about `needed` bytes takes (plus 5% and `SPACE_MARGIN`).

    h5py kills the process (a segmentation fault) when the disk fills under it, and a
    half-written file helps nobody: big writes check first.

    >>> ensure_space("/", 0) is None
    True
    """
    probe = Path(folder).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    wanted = int(needed * 1.05) + SPACE_MARGIN
    if free < wanted:
        raise NoSpace(folder, wanted, free)


def variables_bytes(variables) -> int:
    """Bytes the values of `variables` (Keras or TensorFlow) take."""
    import numpy as np

    def size(dtype) -> int:
        return np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).itemsize

    return sum(int(np.prod(v.shape)) * size(v.dtype) for v in variables)
