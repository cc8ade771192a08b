import time, sys, shutil, os, json
import numpy as np, keras, tensorflow as tf
from electra_tf import ElectraTextClassifier
from electra_tf.pretraining.checkpoint import checkpoint_object
m = ElectraTextClassifier.from_source("/tmp/democlone/data/models/all-MiniLM-L6-v2", labels=["n", "p"], sequence_length=128)
m.compile()
m.fit(["a good film", "a bad film"] * 16, ["p", "n"] * 16, epochs=1, batch_size=32, verbose=0)
out = {}
for mode in ["sync", "async", "sync", "async"]:
    path = f"/tmp/ack/{mode}"
    shutil.rmtree(path, ignore_errors=True); os.makedirs(path)
    ck = checkpoint_object(m)
    opts = tf.train.CheckpointOptions(experimental_enable_async_checkpoint=(mode == "async"))
    t = time.perf_counter(); ck.write(path + "/ckpt", options=opts); ret = time.perf_counter() - t
    if mode == "async":
        ck.sync()
    done = time.perf_counter() - t
    out.setdefault(mode, []).append((round(ret, 3), round(done, 3)))
print(json.dumps(out))
