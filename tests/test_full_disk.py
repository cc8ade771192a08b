"""A full disk under the big writes (issue 39, cases 3 and 5): each is refused before it
starts, in one sentence that says the disk is full and how much it needs, and leaves no
half-written file (h5py kills the process on a full disk, so the space is checked first).

`small_disk` is a 4 MB tmpfs where the test may mount one (root on Linux), else a folder
whose free space `shutil.disk_usage` reports as 4 MB: the checks are the same either way.
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import scratch_init, tiny_config, write_lines

from electra_tf.cli import main
from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.io.durable import SPACE_MARGIN, ensure_space, variables_bytes
from electra_tf.pretraining.checkpoint import Checkpointer
from electra_tf.pretraining.pretrainer import ElectraPretrainer

FREE = 4 * 2**20


def _mount_tmpfs(folder: Path, options: str) -> bool:
    """Mounts a tmpfs with `options` on `folder`; False where this test may not mount."""
    mount = ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)]
    try:
        return subprocess.run(mount, capture_output=True).returncode == 0
    except OSError:
        return False


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = _mount_tmpfs(folder, f"size={FREE // 1024}k")
    if not mounted:  # a disk of FREE bytes: Python's writes past them fail with ENOSPC
        import builtins
        import errno
        import io
        import os

        real_usage, real_open, used = shutil.disk_usage, builtins.open, [0]

        def inside(path):
            return str(Path(path).absolute()).startswith(str(folder))

        def reported(path):
            usage = real_usage(path)
            return usage._replace(free=FREE - used[0]) if inside(path) else usage

        class Limited(io.FileIO):
            def write(self, data):
                if used[0] + len(data) > FREE:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                used[0] += len(data)
                return super().write(data)

        def limited_open(path, mode="r", *args, **kwargs):
            if isinstance(path, (str, os.PathLike)) and inside(path) and set(mode) & set("wax"):
                return io.BufferedWriter(Limited(os.fspath(path), mode.replace("b", "")))
            return real_open(path, mode, *args, **kwargs)

        monkeypatch.setattr(shutil, "disk_usage", reported)
        monkeypatch.setattr(builtins, "open", limited_open)
    yield folder
    if mounted:
        subprocess.run(["umount", str(folder)], check=False)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_ensure_space_counts_the_margin_and_names_what_is_needed(small_disk):
    free = shutil.disk_usage(small_disk).free
    assert 0 < free <= FREE
    with pytest.raises(OSError) as caught:
        ensure_space(small_disk / "new" / "folder", 0)
    needed_mb = round(SPACE_MARGIN / 2**20)
    assert caught.value.errno == 28 and caught.value.filename == str(small_disk / "new" / "folder")
    assert f"about {needed_mb} MB needed, {free / 2**20:.0f} MB free" in str(caught.value)
    ensure_space(small_disk.parent, 10 * 2**20)  # the test's own disk has room
    assert variables_bytes(ElectraPretrainer(tiny_config()).weights) == sum(
        np.asarray(w.numpy()).nbytes for w in ElectraPretrainer(tiny_config()).weights
    )


def test_fine_tuning_onto_a_full_disk_stops_in_one_sentence_with_nothing_half_written(
    small_disk,
):
    from electra_tf.datasets.readers import read_glue_tsv
    from electra_tf.datasets.tasks import TASKS
    from electra_tf.finetuning.engine import write_best
    from electra_tf.finetuning.run import finetune
    from electra_tf.tasks.config import FinetuneConfig

    words = ["good", "bad", "the", "movie"]
    vocab = write_vocabulary([*SPECIAL_TOKENS, *words], small_disk.parent / "v.txt")
    rows = ["sentence\tlabel", *[f"the movie {w}\t{int(w == 'good')}" for w in words * 8]]
    train = write_lines(small_disk.parent / "train.tsv", rows)
    data = {
        "train": read_glue_tsv(TASKS["sst2"], train),
        "dev": read_glue_tsv(TASKS["sst2"], train),
    }
    # Two epochs: the first one's resume checkpoint is the first write (the last epoch's
    # end writes the best weights instead, tested below).
    config = FinetuneConfig(epochs=2, batch_size=16, max_seq_length=8, layerwise_decay=1.0)
    init = scratch_init(len(SPECIAL_TOKENS) + len(words), vocab)
    out = small_disk / "run"
    with pytest.raises(ConfigError) as caught:
        finetune(TASKS["sst2"], init, data, config, output_dir=out, progress=None)
    message = str(caught.value)
    assert message.startswith("Could not write ") and "epoch-0001" in message
    assert "(No space left on device: about 16 MB needed, " in message
    assert message.endswith("The previous epoch's checkpoint is untouched.")
    assert not [f for f in _files(out) if f.endswith((".h5", ".keras", ".npz")) or "tmp" in f]

    # The best epoch's weights: the write is refused before it starts, no scratch left.
    import keras

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    seed_folder = small_disk / "seed-1"
    seed_folder.mkdir()
    with pytest.raises(ConfigError) as caught:
        write_best(model, seed_folder, {"epoch": 1})
    assert "(No space left on device: about 16 MB needed, " in str(caught.value)
    assert str(caught.value).endswith("rerun: it resumes from the newest epoch checkpoint.")
    assert _files(seed_folder) == []


def test_the_kept_model_folder_is_not_started_on_a_full_disk(small_disk):
    import keras

    from electra_tf.tasks.model_folder import write_model_folder

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    with pytest.raises(ConfigError) as caught:
        write_model_folder(model, small_disk / "model", {"kind": "classification"})
    assert "No space left on device: about 16 MB needed" in str(caught.value)
    assert _files(small_disk) == []


@pytest.mark.parametrize("format", ["serving", "hub", "keras-hub", "hugging-face", "all"])
def test_every_export_format_onto_a_full_disk_gets_one_sentence_and_no_folder(
    small_disk, tmp_path, capsys, format
):
    run = tmp_path / "run"
    model = ElectraPretrainer(tiny_config())
    model.compile()
    Checkpointer(run / "checkpoints", model).save(1)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "word"]) + "\n")
    out = small_disk / "export"
    code = main(["export", "--checkpoint", str(run), "--format", format,
                 "--vocab-file", str(vocab), "--out", str(out)])  # fmt: skip
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert f"Could not write the export into {out} (No space left on device: about " in lines[0]
    assert lines[0].endswith("free space or choose a writable --out.")
    assert _files(small_disk) == []  # not even an empty --out


@pytest.fixture
def read_only(tmp_path, monkeypatch):
    """A read-only folder: a read-only tmpfs where the test may mount one, else a folder
    whose `mkdir` and file opens for writing fail with EROFS."""
    import errno
    import os

    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = _mount_tmpfs(folder, "size=1m,ro")
    if not mounted:
        import builtins

        real_mkdir, real_open = os.mkdir, builtins.open

        def inside(path):
            return str(Path(path).absolute()).startswith(str(folder))

        def refuse(path, *args, **kwargs):
            if inside(path):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real_mkdir(path, *args, **kwargs)

        def refuse_open(path, mode="r", *args, **kwargs):
            if isinstance(path, (str, os.PathLike)) and inside(path) and set(mode) & set("wax"):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
            return real_open(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "mkdir", refuse)
        monkeypatch.setattr(builtins, "open", refuse_open)
    yield folder
    if mounted:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("disk", ["read_only", "small_disk"])
def test_finetune_into_a_read_only_or_full_folder_is_one_sentence_and_leaves_nothing(
    disk, request, monkeypatch, capsys
):
    from electra_tf.finetuning import user_task

    folder = request.getfixturevalue(disk)
    words = ["good", "bad", "the", "movie"]
    vocab = write_vocabulary([*SPECIAL_TOKENS, *words], folder.parent / "v.txt")
    rows = ["text\tlabel", *[f"the movie {w}\t{int(w == 'good')}" for w in words * 8]]
    train = write_lines(folder.parent / "train.tsv", rows)
    init = scratch_init(len(SPECIAL_TOKENS) + len(words), vocab)
    monkeypatch.setattr(user_task, "load_initialization", lambda spec, vocab_file=None: init)
    if disk == "small_disk":  # fill it: not even request.json fits
        with open(folder / "fill", "wb") as fill:
            fill.write(b"\0" * (shutil.disk_usage(folder).free - 1024))
    out = folder / "run"
    code = main(["finetune", "--init", "scratch", "--train", str(train), "--dev", str(train),
                 "--epochs", "1", "--output-dir", str(out)])  # fmt: skip
    said = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(said) == 1, said
    reason = "the file system is read-only" if disk == "read_only" else "the disk is full"
    assert said[0].startswith(f"electra-tf finetune: Could not write {out}") and reason in said[0]
    assert not out.exists()


@pytest.mark.parametrize("disk", ["read_only", "small_disk"])
def test_a_refused_file_write_names_the_file_asked_for_not_its_scratch(disk, request):
    from electra_tf.io.durable import write_atomic

    folder = request.getfixturevalue(disk)
    if disk == "small_disk":
        with open(folder / "fill", "wb") as fill:
            fill.write(b"\0" * shutil.disk_usage(folder).free)
    with pytest.raises(OSError) as caught:
        write_atomic(folder / "p.jsonl", "x" * 8192)
    assert caught.value.errno == (30 if disk == "read_only" else 28)
    assert caught.value.filename == str(folder / "p.jsonl")
    assert not (folder / ".p.jsonl.tmp").exists()


def test_an_export_into_a_small_read_only_folder_says_read_only_not_full(read_only, tmp_path):
    from electra_tf.serving.formats import export_model

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "word"]) + "\n")
    with pytest.raises(ConfigError) as caught:
        export_model(
            ElectraPretrainer(tiny_config()), read_only / "exp", "hub", vocab_file=str(vocab)
        )
    assert "(Read-only file system)" in str(caught.value)
    assert not (read_only / "exp").exists()


def test_a_finetuned_savedmodel_export_onto_a_full_disk_says_how_much_it_needs(small_disk):
    # Issue 56, case 14: TensorFlow's SaveV2 failed with its internals
    # ("{{function_node __wrapped__SaveV2...}}") instead of the sizes.
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.text_classifier import ElectraTextClassifier
    from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

    tokens = [*SPECIAL_TOKENS, "good", "bad"]
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=1, hidden_dim=8,
                             embedding_dim=8, num_heads=2, intermediate_dim=16,
                             max_sequence_length=16)  # fmt: skip
    preprocessor = ElectraTextClassifierPreprocessor(tokens, sequence_length=16)
    model = ElectraTextClassifier(encoder, ["no", "yes"], preprocessor=preprocessor)
    model.build()
    with open(small_disk / "fill", "wb") as fill:  # a few KB left: not even the graph fits
        fill.write(b"\0" * (shutil.disk_usage(small_disk).free - 8192))
    out = small_disk / "serving"
    info = {"kind": "classification", "pair": False}
    with pytest.raises(ConfigError) as caught:
        export_finetuned(model, info, out, model_name="t")
    message = str(caught.value)
    assert (
        f"Could not write the export into {out / 't'} (No space left on device: about " in message
    )
    assert "MB needed, 0 MB free" in message or "KB free" in message
    assert "function_node" not in message and message.count("\n") == 0
    assert _files(small_disk) == ["fill"]
