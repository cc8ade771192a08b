"""How long the quick lost-worker test's survivor takes to stop once its peer is killed
(test_multi_worker.py's pair: killed after checkpoint 2 of 6). Run from tests/ with the
package on PYTHONPATH; prints one JSON line."""

import json
import os
import pathlib
import shutil
import sys
import time

sys.path[:0] = [".", "pretraining"]
import test_multi_worker as t  # noqa: E402
from helpers import write_packed  # noqa: E402

folder = pathlib.Path("/tmp/lost-worker")
shutil.rmtree(folder, ignore_errors=True)
data = str(write_packed(folder / "data", n=64, seq=16, shards=2))
run, outs = str(folder / "run"), [folder / f"w{i}.npz" for i in range(2)]
start = time.time()
workers = t._pair(data, run, outs)
marker = os.path.join(run, "checkpoints", "step-00000002")
while not os.path.exists(marker):
    time.sleep(0.05)
reached = time.time()
workers[1].kill()
_, err = workers[0].communicate(timeout=180)
stopped = time.time()
workers[1].communicate()
print(json.dumps({"to_checkpoint_2_s": round(reached - start, 1),
                  "survivor_stopped_after_kill_s": round(stopped - reached, 1),
                  "survivor_exit": workers[0].returncode,
                  "last_line": err.strip().splitlines()[-1][:200]}))
