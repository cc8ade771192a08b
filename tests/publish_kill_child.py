"""Republishes a folder in its own process and kill -9s itself between the swap's two renames.

Run as `python publish_kill_child.py FINAL`: a copy of FINAL's files goes into a scratch
folder through `durable.publishing(FINAL)`, on a file system taken to have no
`RENAME_EXCHANGE` (so the swap is two renames: FINAL out to `.<name>.old`, the scratch
in); SIGKILL hits as the second rename is about to run. What is left on disk is what a
power cut or an OOM kill at that instant leaves.
"""

import gc
import os
import shutil
import signal
import sys
from pathlib import Path

from electra_tf.io import durable


def main(final):
    """Publishes a copy of `final` over it and is killed before the new copy is in place."""
    final = Path(final)
    replace, old = os.replace, final.with_name(f".{final.name}.old")

    def killing_replace(source, target):
        if Path(target) == final and old.is_dir():
            os.kill(os.getpid(), signal.SIGKILL)  # the old folder out, the new one not in
        replace(source, target)

    durable.exchange = lambda first, second: False  # the two-rename fallback
    os.replace = killing_replace
    with durable.publishing(final) as scratch:
        shutil.copytree(final, scratch, dirs_exist_ok=True)
    raise SystemExit("the swap finished: the kill did not happen")


if __name__ == "__main__":
    main(*sys.argv[1:])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
