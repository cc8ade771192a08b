"""A test double for a power cut: what was not synced to disk is lost.

`PowerCut` watches `os.fsync` and `os.replace` (the calls `electra_tf.io.durable`
makes). A file's content survives only if it was fsynced after its last change; a
rename survives only if the folder it renamed into was fsynced after it. `cut()`
then drops what would not have survived: unsynced files are truncated to nothing
(their pages never reached the disk) and unsynced renames are reported. Files
TensorFlow writes from C++ are never fsynced by TensorFlow itself, so they count as
lost unless the package syncs them.
"""

from __future__ import annotations

import os
from pathlib import Path


class PowerCut:
    """Records syncs and renames under `root` (see the module docstring)."""

    def __init__(self, monkeypatch, root):
        self.root = Path(root)
        self.synced_files = {}  # inode -> (size, mtime_ns) when it was last fsynced
        self.synced_folders = {}  # inode -> sequence number of its last fsync
        self.renames = []  # (sequence number, destination)
        self.sequence = 0
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd):
            real_fsync(fd)
            self.sequence += 1
            status = os.fstat(fd)
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                self.synced_folders[status.st_ino] = self.sequence
            else:
                self.synced_files[status.st_ino] = (status.st_size, status.st_mtime_ns)

        def replace(source, destination, **kwargs):
            real_replace(source, destination, **kwargs)
            self.sequence += 1
            self.renames.append((self.sequence, Path(destination)))

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def unsynced_files(self) -> list[Path]:
        """Files under `root` whose current content was never fsynced."""
        lost = []
        for path in sorted(p for p in self.root.rglob("*") if p.is_file()):
            status = path.stat()
            if self.synced_files.get(status.st_ino) != (status.st_size, status.st_mtime_ns):
                lost.append(path)
        return lost

    def unsynced_renames(self) -> list[Path]:
        """Destinations still present whose folder was not fsynced after the rename."""
        lost = []
        for sequence, destination in self.renames:
            if not destination.exists() or self.root not in destination.parents:
                continue
            folder = destination.parent.stat().st_ino
            if self.synced_folders.get(folder, -1) < sequence:
                lost.append(destination)
        return lost

    def cut(self) -> list[Path]:
        """Truncates every unsynced file to nothing; returns them."""
        lost = self.unsynced_files()
        for path in lost:
            path.write_bytes(b"")
        return lost
