"""`python child_entry.py SCRIPT ARGS...`: runs a test's child script as `__main__` in a
process started the way `electra-tf`'s own processes start (`electra_tf.startup`: the
frameworks' optional import-time probes left out, the collector paused while they load),
so a child spends on its imports what the command it stands for does. `CHILD_PYTHON` in
helpers.py is the command prefix."""

import runpy
import sys
from pathlib import Path

from electra_tf.startup import start_process

if __name__ == "__main__":
    start_process()
    script = Path(sys.argv[1]).resolve()
    sys.argv = [str(script), *sys.argv[2:]]
    sys.path[0] = str(script.parent)  # as `python SCRIPT` puts the script's folder first
    runpy.run_path(str(script), run_name="__main__")
