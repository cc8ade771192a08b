"""Run by test_finetune_backends.py under KERAS_BACKEND=jax or torch: `electra-tf
finetune`'s engine (`finetune_files`, as the command runs it) on this backend.

`python finetune_backend_child.py FOLDER` fine-tunes, each from a one-layer scratch
encoder, into FOLDER/<backend>/:
- `whole/` and `killed/`: test_engine.py's toy reviews, 3 epochs, dropout 0.1, once
  straight and once stopped right after epoch 2's checkpoint was published (as kill -9
  would; a scratch folder of epoch 3 left behind), then run again (the resume);
- `<kind>/run/` for every kind: test_round_trip.py's toy files (3 epochs) and
  test_question_answering.py's toy SQuAD files (`question_answering/`, dev as JSONL).
- `FOLDER/resumed-<backend>/run/`, where the test left a copy of a TensorFlow run stopped
  after its first epoch (dropout 0; its files in FOLDER): that run resumed here, to 3
  epochs.
Saves FOLDER/<backend>/kept.npz: the kept weights of `whole` and of `killed`.
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import keras
import numpy as np
from helpers import scratch_init_one_layer
from test_engine import _files, _run
from test_question_answering import WORDS as QA_WORDS
from test_question_answering import _toy, _write_squad
from test_round_trip import WORDS, _finetune

from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.finetuning import user_task
from electra_tf.finetuning.engine import EpochSelection
from electra_tf.tasks.model_folder import load_finetuned

KINDS = ("classification", "multi_label", "regression", "tagging")


class Killed(Exception):
    """Stands for kill -9 right after a checkpoint was published."""


def killed_and_resumed(folder: Path) -> None:
    vocab, train, dev = _files(folder)
    _run(folder, "whole", vocab, train, dev, "epochs=3")
    write_epoch = EpochSelection._write_epoch

    def write_then_die(self, epoch):
        write_epoch(self, epoch)
        self.wait_for_checkpoint()  # published
        if epoch == 2:
            (self.folder / ".epoch-0003.tmp").mkdir()  # a scratch folder a kill leaves
            raise Killed

    EpochSelection._write_epoch = write_then_die
    try:
        _run(folder, "killed", vocab, train, dev, "epochs=3")
        raise AssertionError("the run was not stopped")
    except Killed:
        pass
    finally:
        EpochSelection._write_epoch = write_epoch
    lines = []
    _run(folder, "killed", vocab, train, dev, "epochs=3", progress=lines.append)
    assert any("resuming after epoch 2" in line for line in lines), lines
    kept = {}
    for name in ("whole", "killed"):
        model, _ = load_finetuned(folder / name)
        for index, weight in enumerate(model.weights):
            kept[f"{name}.{index:03d}"] = keras.ops.convert_to_numpy(weight.value)
    np.savez(folder / "kept.npz", **kept)


def question_answering(folder: Path) -> None:
    folder.mkdir()
    vocab = write_vocabulary([*SPECIAL_TOKENS, *QA_WORDS, "."], folder / "vocab.txt")
    init = scratch_init_one_layer(len(SPECIAL_TOKENS) + len(QA_WORDS) + 1, vocab)
    train = _write_squad(folder / "train.json", _toy(96, 0))
    dev = folder / "dev.jsonl"
    dev.write_text("".join(json.dumps(row) + "\n" for row in _toy(16, 1)))
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        user_task.finetune_files(
            "scratch", train=train, dev=dev, output_dir=folder / "run", progress=None,
            overrides=("epochs=3", "learning_rate=1e-2", "batch_size=16", "max_seq_length=32",
                       "max_query_length=16", "layerwise_decay=1.0"),
        )  # fmt: skip
    finally:
        user_task.load_initialization = original


#: The TensorFlow run resumed on each backend (test_finetune_backends.py): 3 epochs, no
#: dropout (the backends' dropout masks differ).
FROM_TENSORFLOW = ("epochs=3", "dropout=0.0")


def main(folder: str) -> None:
    files = [Path(folder) / name for name in ("vocab.txt", "train.csv", "dev.csv")]
    _run(Path(folder) / f"resumed-{keras.config.backend()}", "run", *files, *FROM_TENSORFLOW)
    root = Path(folder) / keras.config.backend()
    root.mkdir(parents=True)
    killed_and_resumed(root)
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + WORDS, root / "vocab.txt")
    for kind in KINDS:
        _finetune(root, kind, vocab, make_init=scratch_init_one_layer, epochs=3)
    question_answering(root / "question_answering")


if __name__ == "__main__":
    main(sys.argv[1])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
