"""Fine-tunes the toy question-answering files in its own process; kill -9s itself on request.

Run as `python qa_kill_driver.py WORKDIR RUN POINT EPOCH [LAYERS]`: the toy SQuAD files in
WORKDIR (written by the test), the run folder WORKDIR/RUN (several, comma-separated, run one
after another in this process; the kill is set up for the last one only, once the ones before
it have finished or resumed); LAYERS: the scratch encoder's, 2 unless given. POINT is where
SIGKILL hits in EPOCH:

- `none`: never (the uninterrupted run, or a resume);
- `mid-epoch`: after the epoch's second batch;
- `before-best`: after the epoch's checkpoint is published (it holds the no-answer
  threshold chosen on dev), before the best weights are written.
"""

import gc
import os
import signal
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers

from helpers import scratch_init, scratch_init_one_layer  # noqa: E402

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


def _scratch(workdir, layers):
    """The from-scratch initialization of the toy's vocabulary, of `layers` (1 or 2) layers."""
    size = len((workdir / "vocab.txt").read_text().splitlines())
    make_init = scratch_init_one_layer if int(layers) == 1 else scratch_init
    return make_init(size, workdir / "vocab.txt")


def finetune_in_this_process(workdir, name, layers=2):
    """Fine-tunes (or resumes) WORKDIR/NAME as this driver does, in the caller's process."""
    workdir, init = Path(workdir), _scratch(Path(workdir), layers)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        _finetune(workdir, name)
    finally:
        user_task.load_initialization = original


def main(workdir, run, point, epoch, layers="2"):
    workdir, epoch = Path(workdir), int(epoch)
    init = _scratch(workdir, layers)
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
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
