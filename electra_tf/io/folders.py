"""One writer per output folder, and a finished folder swapped in by one atomic rename.

`durable.publish_folder` replaces a folder with two renames (old out, new in); a kill
between them leaves no folder under the final name. `swap_folder` exchanges the
scratch and final folders in one `renameat2(RENAME_EXCHANGE)` call where the file
system has it (Linux ext4, xfs, btrfs, tmpfs), so readers see the old folder or the
new one and nothing in between; elsewhere it falls back to the two renames, and
`recover_folder`, run under the lock at the next start, puts the old folder back.
`folder_lock` keeps a second writer out of a folder while the first works on it.

Example:

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> final, scratch = root / "data", root / ".data.tmp"
>>> for folder, text in ((final, "old"), (scratch, "new")):
...     folder.mkdir()
...     _ = (folder / "file.txt").write_text(text)
>>> with folder_lock(final, "prepare"):
...     _ = swap_folder(scratch, final)
>>> (final / "file.txt").read_text(), scratch.exists()
('new', False)
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import socket
from pathlib import Path

from electra_tf.io.durable import fsync_path, fsync_tree

__all__ = ["FolderBusy", "folder_lock", "swap_folder", "recover_folder", "exchange"]

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class FolderBusy(RuntimeError):
    """Another live process holds the folder's lock; the message names it."""


def _lock_path(final: Path) -> Path:
    return final.with_name(f".{final.name}.lock")


def _acquire(path: Path) -> tuple[int | None, str]:
    """(a descriptor holding the lock on `path`, "") or (None, who holds it)."""
    while True:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 200, 0).decode("utf-8", "replace").strip()
            os.close(descriptor)
            return None, holder or "unknown"
        try:
            same = os.fstat(descriptor).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file its last holder removed while this one opened it
            return descriptor, ""
        os.close(descriptor)


@contextlib.contextmanager
def folder_lock(final, purpose: str):
    """Holds an exclusive lock on writing `final` (a hidden `.<name>.lock` file beside it).

    The lock is the kernel's (`flock`): it goes with the process, so a killed writer
    never blocks the next one (its lock file stays, empty of meaning). The file is
    removed when the lock is released.

    Raises:
        FolderBusy: another process holds it (the message gives its pid and purpose).
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    path = _lock_path(final)
    descriptor, holder = _acquire(path)
    if descriptor is None:
        raise FolderBusy(f"{final} is being written by another process ({holder})")
    try:
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{purpose}, pid {os.getpid()} on {socket.gethostname()}".encode(), 0)
        yield final
    finally:
        path.unlink(missing_ok=True)  # while still locked: a waiting opener retries
        os.close(descriptor)


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


def _old(final: Path) -> Path:
    return final.with_name(f".{final.name}.old")


def swap_folder(scratch, final) -> Path:
    """Puts the finished `scratch` folder (synced first) at `final`, replacing what was there.

    With an existing `final`, the two are exchanged atomically and the old folder,
    now under the scratch name, is deleted; without `RENAME_EXCHANGE` the old one is
    renamed to `.<name>.old` first (see `recover_folder`).
    """
    scratch, final = Path(scratch), Path(final)
    fsync_tree(scratch)
    if final.exists() and exchange(scratch, final):
        fsync_path(final.parent)
        shutil.rmtree(scratch, ignore_errors=True)
        return final
    old = _old(final)
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(scratch, final)
    fsync_path(final.parent)
    shutil.rmtree(old, ignore_errors=True)
    return final


def recover_folder(final) -> str | None:
    """Finishes or undoes a swap that was killed between its two renames.

    Returns "restored" (the old folder was put back under `final`), "cleared" (the new
    one was in place; the leftover old copy was deleted) or None (nothing to do). Call it
    holding `folder_lock`.
    """
    final = Path(final)
    old = _old(final)
    if not old.exists():
        return None
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        return "cleared"
    os.replace(old, final)
    fsync_path(final.parent)
    return "restored"
