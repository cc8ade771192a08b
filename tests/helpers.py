"""Shared helpers for the tests: tiny configs and structured packed data written to disk."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from electra_tf.config import load_recipe

TESTS = Path(__file__).resolve().parent  # the tests folder: helpers, consumers, fixtures
# `[*CHILD_PYTHON, script, ...]`: a child script started as `electra-tf` processes start.
CHILD_PYTHON = (sys.executable, str(TESTS / "child_entry.py"))
VOCAB = 64  # ids 0..4 are [PAD] [UNK] [CLS] [SEP] [MASK]; 5..63 are "words"
SPECIAL = {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}
# Overrides that shrink any recipe to a one-layer, hidden-16 model on length-16 batches of 4.
TINY_OVERRIDES = (
    "model.num_layers=1",
    "model.hidden_dim=16",
    "model.embedding_dim=8",
    "model.num_heads=2",
    "model.intermediate_dim=32",
    "model.max_sequence_length=16",
    "data.sequence_length=16",
    "train.batch_size=4",
)


def tiny_config(*overrides, seq=16, vocab=VOCAB, layers=1):
    """A very small ELECTRA config with this file's special ids."""
    base = [
        f"model.vocabulary_size={vocab}",
        f"model.num_layers={layers}",
        "model.hidden_dim=16",
        "model.embedding_dim=8",
        "model.num_heads=2",
        "model.intermediate_dim=32",
        "model.max_sequence_length=32",
        "model.generator_size_fraction=0.5",
        f"data.sequence_length={seq}",
        "data.pad_id=0",
        "data.unk_id=1",
        "data.cls_id=2",
        "data.sep_id=3",
        "data.mask_id=4",
        "train.batch_size=4",
        "train.num_steps=10",
        "train.warmup_steps=0",
        "train.checkpoint_every=5",
        "train.log_every=5",
    ]
    return load_recipe("tiny").override(*base, *overrides)


def structured_ids(n, seq, vocab=VOCAB, seed=0, pad_some=True):
    """Sequences with structure a tiny model learns quickly: two repeated words.

    Each row is [CLS] a a ... a [SEP] b b ... b [SEP] (segment 0 then 1) for
    random words a, b; about a third of the rows end early in padding. A masked
    token is predictable from its neighbours, and a replaced one stands out.
    Returns (ids, mask, segments) int64 arrays [n, seq].
    """
    rng = np.random.default_rng(seed)
    ids = np.zeros((n, seq), np.int64)
    mask = np.zeros((n, seq), np.int64)
    segments = np.zeros((n, seq), np.int64)
    for row in range(n):
        length = (
            seq if not pad_some or rng.random() < 0.7 else int(rng.integers(max(4, seq // 2), seq))
        )
        a, b = rng.integers(5, vocab, size=2)
        half = (length - 3) // 2
        tokens = [
            SPECIAL["cls"],
            *[a] * half,
            SPECIAL["sep"],
            *[b] * (length - 3 - half),
            SPECIAL["sep"],
        ]
        ids[row, :length] = tokens
        mask[row, :length] = 1
        segments[row, half + 2 : length] = 1
    return ids, mask, segments


def write_packed(folder, n=64, seq=16, vocab=VOCAB, shards=2, seed=0, manifest=True):
    """Writes structured examples as TFRecord shards (and a manifest); returns the folder."""
    import tensorflow as tf

    from electra_tf.data.tfrecords import Manifest, serialize_example

    os.makedirs(folder, exist_ok=True)
    ids, mask, segments = structured_ids(n, seq, vocab, seed)
    names, counts = [], []
    for shard in range(shards):
        name = f"shard-{shard:03d}.tfrecord"
        rows = range(shard, n, shards)
        with tf.io.TFRecordWriter(os.path.join(folder, name)) as writer:
            for r in rows:
                writer.write(serialize_example(ids[r], mask[r], segments[r]))
        names.append(name)
        counts.append(len(rows))
    if manifest:
        Manifest(
            folder=str(folder),
            sequence_length=seq,
            shards=tuple(zip(names, counts)),
            vocabulary_size=vocab,
            special_ids=dict(SPECIAL),
        ).write()
    return str(folder)


def structured_dataset(n=64, seq=16, batch=4, seed=0):
    """`structured_ids` as a repeating `tf.data` stream of int32 batches."""
    import tensorflow as tf

    ids, mask, segments = structured_ids(n, seq, seed=seed)
    data = {
        "token_ids": ids.astype("int32"),
        "padding_mask": mask.astype("int32"),
        "segment_ids": segments.astype("int32"),
    }
    return tf.data.Dataset.from_tensor_slices(data).repeat().batch(batch)


# Fine-tuning -----------------------------------------------------------------------------------

# A two-layer, hidden-8 encoder for the fine-tuning tests.
FINETUNE_ENCODER = dict(
    vocabulary_size=40,
    num_layers=2,
    hidden_dim=8,
    embedding_dim=8,
    num_heads=2,
    intermediate_dim=16,
    max_sequence_length=32,
)


def write_lines(path, lines):
    """Writes `lines` as a UTF-8 text file (one per line); returns the path."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def scratch_init(vocabulary_size, vocab_file):
    """A from-scratch, dropout-free 2-layer encoder (hidden 16) for the toy fine-tunes."""
    from electra_tf.tasks.initialization import Initialization

    encoder = {
        **FINETUNE_ENCODER,
        "vocabulary_size": vocabulary_size,
        "hidden_dim": 16,
        "num_heads": 2,
        "intermediate_dim": 32,
        "dropout": 0.0,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-12,
        "num_segments": 2,
    }
    return Initialization("scratch", encoder, None, str(vocab_file))


def tiny_finetuned_run(run, words=("the", "food", "was", "good", "bad", "slow", "quick")):
    """A fine-tuned run folder (`run/model/`) holding an untrained hidden-8, one-layer
    "bad"/"good" text classifier of task "food", written as `finetune` writes it; no training."""
    import keras

    from electra_tf.data.vocabulary import SPECIAL_TOKENS
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.model_folder import write_model_folder
    from electra_tf.tasks.text_classifier import ElectraTextClassifier
    from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

    keras.utils.set_random_seed(3)
    tokens = list(SPECIAL_TOKENS) + list(words)
    encoder = ElectraEncoder(
        vocabulary_size=len(tokens), num_layers=1, hidden_dim=8, embedding_dim=8, num_heads=2,
        intermediate_dim=16, max_sequence_length=16,
    )  # fmt: skip
    preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=16)
    model = ElectraTextClassifier(encoder, ["bad", "good"], "classification", preprocessor)
    model.build()
    info = {"kind": "classification", "labels": ["bad", "good"], "pair": False, "task": "food"}
    write_model_folder(model, Path(run) / "model", {**info, "max_seq_length": 16})
    return Path(run)


def kill_between_renames(final):
    """Republishes the folder `final` in a child process (`publish_kill_child.py`) that
    SIGKILLs itself between the swap's two renames; checks that only `.<name>.old` is left."""
    import signal
    import subprocess
    import sys

    final = Path(final)
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent), TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, str(TESTS / "publish_kill_child.py"), str(final)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert not final.exists() and final.with_name(f".{final.name}.old").is_dir()


def shuffle_warnings(recorded):
    """Keras's "`shuffle=True` was passed, but will be ignored" warnings among `recorded`.

    Our datasets shuffle themselves, so `fit` must not be told to.
    """
    return [w for w in recorded if "shuffle=True" in str(w.message)]


def scratch_init_one_layer(vocabulary_size, vocab_file):
    """`scratch_init` with ONE encoder layer (hidden 16): the same toy fine-tunes, about half
    the tracing of each train and predict step."""
    init = scratch_init(vocabulary_size, vocab_file)
    init.encoder_config["num_layers"] = 1
    return init


# Test-only: XLA's CPU compiler at its lowest optimisation compiles a JAX step in half the time.
FAST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


def backend_child_env(backend="jax", xla_flags=FAST_XLA_FLAGS, *paths):
    """The environment of a child process on Keras `backend` that imports the package, the
    tests' helpers and `paths`, with `xla_flags` and TensorFlow's log quiet."""
    path = os.pathsep.join([str(TESTS.parent), str(TESTS), *map(str, paths)])
    return dict(
        os.environ,
        KERAS_BACKEND=backend,
        PYTHONPATH=path,
        XLA_FLAGS=xla_flags,
        TF_CPP_MIN_LOG_LEVEL="3",
    )


def cli_compile_cache(env, xdg):
    """`env` where `pretrain` on JAX keeps compiled programs in its own default folder,
    under `xdg` (XDG_CACHE_HOME), not in the suite's temporary one (conftest.py)."""
    env = dict(env, XDG_CACHE_HOME=str(xdg))
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    return env


def set_flags(values):
    """`--set key=value` pairs for the CLI, from a dict of overrides."""
    return [item for key, value in values.items() for item in ("--set", f"{key}={value}")]


def packed_with_vocabulary(folder, n):
    """`n` packed length-16 examples in 2 shards whose manifest names their vocabulary
    (`v.txt`, the special tokens then words), as `--init` needs; returns the data glob."""
    import json

    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

    folder = Path(folder)
    data = write_packed(folder, n=n, seq=16, shards=2)
    write_vocabulary(list(SPECIAL_TOKENS) + [f"w{i}" for i in range(VOCAB - 5)], folder / "v.txt")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["vocab_file"] = "v.txt"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return data


def free_ports(n):
    """`n` TCP ports on 127.0.0.1 that were free a moment ago (for a local cluster)."""
    import socket

    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


import contextlib  # noqa: E402  (added at the end: the helpers above stay as they are)


@contextlib.contextmanager
def functions_run_eagerly():
    """Every `tf.function` (Keras' train, test and predict steps included) runs eagerly
    inside the block, and as before after it: for default twins whose few steps cost less
    run than traced; the slow twin runs the same code traced."""
    import tensorflow as tf

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(before)


# Test-only, added to FAST_XLA_FLAGS: XLA's older CPU code generator (no fusion emitters) and
# runtime (no thunks) compile a tiny JAX step about twice as fast again (measured 2026-11-29,
# jax 0.10.2: the tiny pretrainer's loss and gradients 8.4 -> 3.0 CPU-s, its fit step
# 11.3 -> 5.0); the numbers agree with TensorFlow's within float32 rounding all the same.
FASTER_XLA_FLAGS = (
    f"{FAST_XLA_FLAGS} --xla_cpu_use_fusion_emitters=false --xla_cpu_use_thunk_runtime=false"
)


def exported_classifier_and_tagger(folder, tokens, make_encoder, setting, values):
    """{kind: (model, {value: (version folder, its `serve` signature)})}: an untrained
    3-label text classifier and 3-tag tagger over `tokens` (length 12, encoders from
    `make_encoder()`), each exported by `export_finetuned` once per value of its keyword
    `setting` (the caller seeds first)."""
    import tensorflow as tf

    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.text_classifier import ElectraTextClassifier
    from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
    from electra_tf.tasks.token_classifier import ElectraTokenClassifier
    from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

    classifier = ElectraTextClassifier(
        make_encoder(), ["bad", "good", "meh"], "classification",
        ElectraTextClassifierPreprocessor(tokens, sequence_length=12),
    )  # fmt: skip
    tagger = ElectraTokenClassifier(
        make_encoder(), ["B-LOC", "B-PER", "O"],
        ElectraTokenClassifierPreprocessor(tokens, sequence_length=12),
    )  # fmt: skip
    found = {}
    for kind, model in (("classification", classifier), ("tagging", tagger)):
        model.build()
        info = {"kind": kind, "labels": model.labels, "pair": False}
        forms = {}
        for value in values:
            path = export_finetuned(
                model, info, folder, model_name=f"{kind}_{value}", warmup=False,
                **{setting: value},
            )  # fmt: skip
            forms[value] = (path, tf.saved_model.load(str(path)).signatures["serve"])
        found[kind] = (model, forms)
    return found


def served_ids(model, texts) -> dict:
    """`texts` packed by `model`'s preprocessor as the `serve` signature's int32 inputs."""
    import tensorflow as tf

    packed = model.preprocessor.pack_all(texts)
    keys = (("input_word_ids", "token_ids"), ("input_mask", "padding_mask"),
            ("input_type_ids", "segment_ids"))  # fmt: skip
    return {name: tf.constant(np.asarray(packed[key], np.int32)) for name, key in keys}


def pretrainer_values(model) -> dict:
    """A loaded pretrainer's trainable and optimizer values as numpy, keyed as a portable
    checkpoint's `variables.npz` keys them (`trainable.00000`, `optimizer.00000`, ...)."""
    groups = {"trainable": model.trainable_variables, "optimizer": model.optimizer.variables}
    return {
        f"{group}.{index:05d}": np.asarray(variable.numpy())
        for group, variables in groups.items()
        for index, variable in enumerate(variables)
    }
