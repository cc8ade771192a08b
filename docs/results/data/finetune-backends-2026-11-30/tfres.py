"""A fine-tune started on TensorFlow (toy reviews, dropout 0, stopped after epoch 1) resumed
on JAX or PyTorch, against the same resume on TensorFlow.

From the clone's root: `KERAS_BACKEND=tensorflow python tfres.py WORK` (the stopped run and
TensorFlow's resume), then `KERAS_BACKEND=jax python tfres.py WORK` and `KERAS_BACKEND=torch
...` (one JSON line each); `NOOPT=1` reads the epoch without the optimizer's state (copy
WORK/cut to WORK/<backend> again first).
"""
import sys, pathlib, shutil, json, numpy as np, keras
sys.path[:0] = ["tests", "tests/finetuning"]  # from the clone's root
import finetune_backend_child as c
import os
from electra_tf.finetuning import engine
if os.environ.get("NOOPT"):
    _r = engine.read_tensorflow_weights
    engine.read_tensorflow_weights = lambda m, f, with_optimizer=False: _r(m, f, with_optimizer=False)
from test_engine import _files, _run
from electra_tf.finetuning.engine import EpochSelection
from electra_tf.tasks.model_folder import load_finetuned
root = pathlib.Path(sys.argv[1]); b = keras.config.backend()
X = ("epochs=3", "dropout=0.0")
if b == "tensorflow":
    shutil.rmtree(root, ignore_errors=True); root.mkdir(parents=True)
    (root / "cut").mkdir()
    vocab, train, dev = _files(root)
    w = EpochSelection._write_epoch
    def die(self, epoch):
        w(self, epoch); self.wait_for_checkpoint()
        if epoch == 1: raise c.Killed
    EpochSelection._write_epoch = die
    try: _run(root / "cut", "run", vocab, train, dev, *X)
    except c.Killed: pass
    EpochSelection._write_epoch = w
    for name in ("tf", "jax", "torch"): shutil.copytree(root / "cut", root / name)
    _run(root / "tf", "run", vocab, train, dev, *X)
else:
    vocab, train, dev = root / "vocab.txt", root / "train.csv", root / "dev.csv"
    lines = []
    _run(root / b, "run", vocab, train, dev, *X, progress=lines.append)
    a, _ = load_finetuned(root / "tf" / "run"); m, _ = load_finetuned(root / b / "run")
    d = max(float(np.abs(keras.ops.convert_to_numpy(x.value) - keras.ops.convert_to_numpy(y.value)).max()) for x, y in zip(a.weights, m.weights))
    hist = lambda r: [(h["epoch"], h["loss"], h["macro_f1"]) for h in json.load(open(r / "run" / "results.json"))["runs"][0]["history"]]
    print(json.dumps({"backend": b, "optimizer_state_read": not os.environ.get("NOOPT"), "max_abs_weight_vs_tf_resume": d,
                      "history": hist(root / b), "tf_history": hist(root / "tf"), "resumed_line": [l for l in lines if "resum" in l]}))
