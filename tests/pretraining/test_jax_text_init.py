"""Continued pre-training on JAX the way the README's main job runs it on TensorFlow: a Hugging
Face ELECTRA folder as `--init`, raw text streamed with `--text` (no `prepare`), in float32 and
in mixed_bfloat16. Slow: one JAX child process (JAX's import and two step compilations).
"""

import json
import os
import pathlib
import random
import subprocess

import numpy as np
import pytest
import torch
import transformers as hf
from helpers import CHILD_PYTHON, TESTS, VOCAB
from jax_run_child import fixed_batch

from electra_tf.data.vocabulary import SPECIAL_TOKENS

CHILD = pathlib.Path(__file__).with_name("jax_run_child.py")
WORDS = [f"w{i}" for i in range(VOCAB - len(SPECIAL_TOKENS))]


def _electra_folder(folder):
    """A tiny Hugging Face ELECTRA discriminator with its vocabulary."""
    config = hf.ElectraConfig(
        vocab_size=VOCAB, embedding_size=8, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    model = hf.ElectraForPreTraining(config).eval()
    model.save_pretrained(str(folder))
    (folder / "vocab.txt").write_text("\n".join([*SPECIAL_TOKENS, *WORDS]) + "\n")
    return model


def _text(path):
    """Forty documents of five sentences of the vocabulary's words."""
    rng = random.Random(0)
    lines = []
    for _ in range(40):
        lines += [" ".join(rng.choices(WORDS, k=rng.randint(3, 12))) for _ in range(5)] + [""]
    path.write_text("\n".join(lines) + "\n")


def _command(init, text, run, precision):
    """Two steps at a learning rate of 1e-9: the weights stay the imported ones."""
    return [
        "pretrain", "--init", str(init), "--text", str(text), "--output-dir", str(run),
        "--steps", "2", "--batch-size", "4", "--precision", precision, "--verbose", "0",
        "--set", "data.sequence_length=16", "--set", "train.learning_rate=1e-9",
        "--set", "train.warmup_steps=0", "--set", "train.checkpoint_every=2",
    ]  # fmt: skip


@pytest.mark.slow
def test_jax_continues_a_hugging_face_electra_on_raw_text_in_float32_and_bfloat16(tmp_path):
    folder = tmp_path / "hf"
    model = _electra_folder(folder)
    _text(tmp_path / "text.txt")
    runs = {p: tmp_path / p for p in ("float32", "mixed_bfloat16")}
    child = [*CHILD_PYTHON, str(CHILD), str(tmp_path / "out.npz")]
    for precision, run in runs.items():
        child += ["--", *_command(folder, tmp_path / "text.txt", run, precision)]
    path = [str(TESTS.parent), str(TESTS)]
    env = {"KERAS_BACKEND": "jax", "PYTHONPATH": ":".join(path), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        child, env=dict(os.environ, **env), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    out = np.load(tmp_path / "out.npz")
    assert str(out["backend"]) == "jax"
    # The float32 run's checkpoint, loaded on JAX, is the Hugging Face discriminator.
    batch = fixed_batch()
    with torch.no_grad():
        expected = model(
            input_ids=torch.tensor(batch["token_ids"], dtype=torch.long),
            attention_mask=torch.tensor(batch["padding_mask"], dtype=torch.long),
            token_type_ids=torch.tensor(batch["segment_ids"], dtype=torch.long),
        ).logits.numpy()
    np.testing.assert_allclose(out["logits"], expected, atol=1e-5)
    # Both runs streamed the text to step 2 and stored float32 weights; bfloat16 computed in
    # bfloat16 (its losses and gradients differ a little) on the same float32 weights.
    logs = {}
    for precision, run in runs.items():
        config = json.loads((run / "config.json").read_text())
        assert config["train"]["mixed_precision"] == precision
        record = json.loads((run / "last_run.json").read_text())
        assert record["step"] == 2 and record["status"] == "finished"
        logs[precision] = record["logs"]
    step = pathlib.Path("checkpoints", "step-00000002", "variables.npz")
    weights = [np.load(run / step) for run in runs.values()]
    names = [k for k in weights[0].files if k.startswith("trainable.")]
    moments = [k for k in weights[0].files if k.startswith("optimizer.")]
    assert len(names) > 20 and all(weights[1][k].dtype == np.float32 for k in names)
    assert all(np.allclose(weights[0][k], weights[1][k], atol=1e-6) for k in names)
    # Adam's moments hold the gradients, which bfloat16 arithmetic changed.
    assert any(not np.allclose(weights[0][k], weights[1][k], atol=1e-6) for k in moments)
    first, second = logs["float32"]["mlm_loss"], logs["mixed_bfloat16"]["mlm_loss"]
    assert first != second and abs(first - second) < 1e-2 * abs(first), (first, second)
