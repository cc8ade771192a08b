"""A mixed_float16 pre-training run cut while its loss scale calibrates, resumed, against
the same run uninterrupted (TensorFlow), and the same cut run resumed on PyTorch.

`python cut_resume.py WORK [--torch]` from the clone's root (the package importable): tiny
model (hidden 8, one layer, dropout 0), 32 packed examples of 16 tokens, batch 4, learning
rate 1e-3. TensorFlow: a straight run of 8 batches; the same command cut by `--max-steps 4`
(Keras's first loss scale, 2**15, overflows here, so those four batches are skipped steps),
then run again (the resume). With `--torch`, a copy of the cut run is also resumed on
PyTorch (one thread), beside the TensorFlow resume. Prints one JSON line: each run's step,
loss scale and batches read, and the largest difference from the straight run (TensorFlow
resume) or from the TensorFlow resume (PyTorch), and how far the weights moved after the
cut. (Checkpoints that do not record `batches`, before 2026-11-30, print null there.)
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path.cwd()
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "pretraining")]

from helpers import backend_child_env, packed_with_vocabulary, pretrainer_values  # noqa: E402

from electra_tf.cli import main  # noqa: E402
from electra_tf.pretraining.checkpoint import find_checkpoint, load_pretrainer  # noqa: E402

SETTINGS = {
    "model.num_layers": 1, "model.hidden_dim": 8, "model.embedding_dim": 8,
    "model.num_heads": 2, "model.intermediate_dim": 16, "model.max_sequence_length": 16,
    "model.dropout": 0.0, "data.sequence_length": 16, "train.num_steps": 8,
    "train.warmup_steps": 0, "train.learning_rate": 1e-3, "train.checkpoint_every": 2,
}  # fmt: skip


def command(data, run, *more):
    flags = [a for k, v in SETTINGS.items() for a in ("--set", f"{k}={v}")]
    return ["pretrain", "--recipe", "tiny", "--data", data, "--batch-size", "4", "--verbose",
            "0", "--output-dir", str(run), "--precision", "mixed_float16", *flags, *more]  # fmt: skip


def state(run):
    folder = find_checkpoint(run)
    saved = json.loads((folder / "state.json").read_text())
    return {"checkpoint": folder.name, "batches": saved.get("batches")}


def describe(model):
    optimizer = model.optimizer
    return {"step": int(optimizer.iterations.numpy()), "scale": float(optimizer.dynamic_scale.numpy())}


def largest(a, b):
    keys = [k for k in a if k.startswith("trainable.")]
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in keys)


def main_(work, with_torch):
    work = pathlib.Path(work)
    shutil.rmtree(work, ignore_errors=True)
    data = str(packed_with_vocabulary(work / "data", n=32))
    straight, cut = work / "straight", work / "cut"
    assert main(command(data, straight)) == 0
    assert main(command(data, cut, "--max-steps", "4")) == 0
    cut_model = load_pretrainer(cut)
    at_cut, cut_values = {**describe(cut_model), **state(cut)}, pretrainer_values(cut_model)
    if with_torch:
        shutil.copytree(cut, work / "torch")
    assert main(command(data, cut)) == 0
    a, b = load_pretrainer(straight), load_pretrainer(cut)
    out = {
        "straight": {**describe(a), **state(straight)},
        "cut": at_cut,
        "resumed": {**describe(b), **state(cut)},
        "resumed_vs_straight_max_abs": largest(pretrainer_values(b), pretrainer_values(a)),
        "moved_since_cut_max_abs": largest(pretrainer_values(b), cut_values),
    }
    if with_torch:
        env = dict(backend_child_env("torch", ""), OMP_NUM_THREADS="1")
        child = ROOT / "tests" / "pretraining" / "jax_run_child.py"
        args = [sys.executable, str(child), str(work / "t.npz"), "--", *command(data, work / "torch")]
        subprocess.run(args, env=env, check=True, capture_output=True)
        step = describe(b)["step"]
        path = work / "torch" / "checkpoints" / f"step-{step:08d}" / "variables.npz"
        with np.load(path) as saved:
            torch_values = {k: saved[k] for k in saved.files if k != "paths"}
        out["torch_resumed"] = state(work / "torch")
        out["torch_vs_tf_resume_max_abs"] = largest(torch_values, pretrainer_values(b))
    print(json.dumps(out))


if __name__ == "__main__":
    main_(sys.argv[1], "--torch" in sys.argv)
    os._exit(0)
