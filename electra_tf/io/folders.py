"""One writer per output folder, and a finished folder swapped in by one atomic rename.

`swap_folder` is `durable.publish_folder`, the one folder swap of the package: it
exchanges the scratch and final folders in one `renameat2(RENAME_EXCHANGE)` call where
the file system has it, and elsewhere falls back to two renames, a kill between which
`recover_folder` (run under the lock at the next start) undoes. `folder_lock` keeps a
second writer out of a folder while the first works on it.

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
import fcntl
import os
import socket
from pathlib import Path

from electra_tf.io.durable import exchange, publish_folder, recover_folder

__all__ = ["FolderBusy", "folder_lock", "swap_folder", "recover_folder", "exchange"]


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


#: The package's one folder swap (see `electra_tf.io.durable.publish_folder`).
swap_folder = publish_folder
