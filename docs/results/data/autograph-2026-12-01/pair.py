"""One uninterrupted pair of 6-step multi-worker `pretrain` workers (test_multi_worker.py's
quick pair: tiny recipe cut to one hidden-16 layer, 64 packed length-16 examples) from the
electra_tf on PYTHONPATH; prints one JSON line: wall, both workers' CPU-seconds, and a hash
of worker 0's final weights. argv: label, tests folder, scratch folder."""

import hashlib
import json
import os
import pathlib
import resource
import sys
import time

label, tests, scratch = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
sys.path[:0] = [str(tests), str(tests / "pretraining")]
import numpy as np  # noqa: E402
import test_multi_worker as t  # noqa: E402
from helpers import free_ports, write_packed  # noqa: E402

data_dir = scratch / "data"
data = str(data_dir) if data_dir.exists() else str(write_packed(data_dir, n=64, seq=16, shards=2))
run = scratch / f"run-{label}-{time.time():.0f}"
cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
outs = [scratch / f"{label}-{i}.npz" for i in range(2)]
start = time.time()
workers = [t._launch(data, str(run), cluster, i, 6, out) for i, out in enumerate(outs)]
for worker in workers:
    _, err = worker.communicate()
    assert worker.returncode == 0, err[-2000:]
wall = time.time() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with np.load(outs[0]) as weights:
    digest = hashlib.sha256(b"".join(weights[k].tobytes() for k in sorted(weights.files)))
print(json.dumps({"what": "multi_worker_pair", "label": label, "wall_s": round(wall, 2),
                  "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                  "weights_sha256": digest.hexdigest()[:16], "electra_tf": os.environ["PYTHONPATH"]}))
