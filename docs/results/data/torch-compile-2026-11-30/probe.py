import os, sys, time, json
import numpy as np, keras
from electra_tf.config import load_recipe
from electra_tf.pretraining.pretrainer import ElectraPretrainer
mode = sys.argv[1]
cfg = load_recipe("tiny").override("data.sequence_length=64", "train.batch_size=8", "model.max_sequence_length=64")
keras.utils.set_random_seed(1)
m = ElectraPretrainer(cfg)
opt = None
m.compile()
if mode == "compiled":
    keras.Model.compile(m, optimizer=m.optimizer, jit_compile=True)
rng = np.random.default_rng(0)
V = cfg.model.vocabulary_size
ids = rng.integers(5, V, size=(8 * 12, 64)).astype("int32"); ids[:, 0] = 2
data = {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
t = time.time(); h = m.fit(data, batch_size=8, epochs=1, steps_per_epoch=2, verbose=0); first = time.time() - t
t = time.time(); h = m.fit(data, batch_size=8, epochs=1, steps_per_epoch=10, verbose=0); ten = time.time() - t
print(json.dumps({"mode": mode, "first_two_s": first, "ten_steps_s": ten, "loss": float(h.history["loss"][-1])}))
