"""Fine-tunes the toy question-answering files in its own process; kill -9s itself on request.

Run as `python qa_kill_driver.py WORKDIR RUN POINT EPOCH`: the toy SQuAD files in WORKDIR
(written by the test), the run folder WORKDIR/RUN (several, comma-separated, run one after
another in this process; the kill is set up for the last one only, once the ones before it
have finished or resumed). POINT is where SIGKILL hits in EPOCH:

- `none`: never (the uninterrupted run, or a resume);
- `mid-epoch`: after the epoch's second batch;
- `before-best`: after the epoch's checkpoint is published (it holds the no-answer
  threshold chosen on dev), before the best weights are written.
"""

import os
import signal
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers

from helpers import scratch_init  # noqa: E402

from electra_tf.finetuning import engine, user_task  # noqa: E402

# The paper's defaults: the from-scratch toy at 1e-2 was calibrated with their warmup.
OVERRIDES = ("epochs=3", "learning_rate=1e-2", "batch_size=8", "max_seq_length=16",
             "doc_stride=4", "max_query_length=5", "layerwise_decay=1.0", "seed=3",
             "defaults=paper")  # fmt: skip


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def _finetune(workdir, name):
    user_task.finetune_files(
        "scratch", train=workdir / "train.json", dev=workdir / "dev.json",
        output_dir=workdir / name, progress=None, overrides=OVERRIDES,
    )  # fmt: skip


def main(workdir, run, point, epoch):
    workdir, epoch = Path(workdir), int(epoch)
    size = len((workdir / "vocab.txt").read_text().splitlines())
    init = scratch_init(size, workdir / "vocab.txt")
    user_task.load_initialization = lambda spec, vocab_file=None: init
    *before, last = run.split(",")
    for name in before:
        _finetune(workdir, name)
    if point == "mid-epoch":

        def on_epoch_begin(self, number, logs=None):
            self.killing = number + 1 == epoch

        def on_train_batch_end(self, batch, logs=None):
            if getattr(self, "killing", False) and batch == 1:
                die()

        engine.EpochSelection.on_epoch_begin = on_epoch_begin
        engine.EpochSelection.on_train_batch_end = on_train_batch_end
    elif point == "before-best":
        original_best = engine.write_best

        def write_best(model, folder, entry):
            if entry["epoch"] == epoch:
                die()
            return original_best(model, folder, entry)

        engine.write_best = write_best
    _finetune(workdir, last)


if __name__ == "__main__":
    main(*sys.argv[1:])
