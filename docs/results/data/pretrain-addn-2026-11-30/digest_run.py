"""electra-tf pretrain (argv after the first) with a callback that writes, after every step,
a crc32 of each model and optimizer variable to $DIGESTS (jsonl: step, crcs)."""
import json, os, sys, zlib
import keras
import electra_tf.pretraining.run as run_mod

class Digest(keras.callbacks.Callback):
    def __init__(self, path):
        super().__init__(); self.f = open(path, "w")
    def on_train_batch_end(self, batch, logs=None):
        m = self.model
        vs = list(m.variables) + list(m.optimizer.variables)
        crcs = [zlib.crc32(v.numpy().tobytes()) for v in vs]
        if not hasattr(self, "names"):
            self.f.write(json.dumps({"names": [v.path for v in vs]}) + "\n")
            self.names = True
        self.f.write(json.dumps({"step": int(m.optimizer.iterations.numpy()), "crcs": crcs}) + "\n")
        self.f.flush()

orig = run_mod.run_pretraining
def patched(*a, **k):
    k["callbacks"] = list(k.get("callbacks", ())) + [Digest(os.environ["DIGESTS"])]
    return orig(*a, **k)
run_mod.run_pretraining = patched
from electra_tf.cli import main
sys.exit(main(sys.argv[1:]))
