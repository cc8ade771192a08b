"""Fine-tunes the engine tests' toy task in its own process, and kill -9s itself on request.

Run as `python kill_driver.py WORKDIR RUN POINT SEED EPOCH`: the toy files in WORKDIR,
the run folder WORKDIR/RUN (several, comma-separated, run one after another in this process).
POINT is where SIGKILL hits seed SEED in epoch EPOCH:

- `none`: never (the uninterrupted run, or a resume);
- `mid-epoch`: after the epoch's second batch;
- `checkpoint`: while the epoch's checkpoint is being written (its files written, the
  folder not yet published);
- `before-best`: after the checkpoint is published, before the best weights are written.
"""

import os
import signal
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers

from finetuning.test_engine import _files, _run  # noqa: E402

from electra_tf.finetuning import engine  # noqa: E402


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def main(workdir, run, point, seed, epoch):
    seed, epoch = int(seed), int(epoch)
    workdir = Path(workdir)
    vocab, train, dev = _files(workdir)
    target = f"seed-{seed}"

    def hit(folder) -> bool:
        return target == Path(folder).name

    if point == "mid-epoch":

        def on_epoch_begin(self, number, logs=None):
            self.killing = hit(self.folder) and number + 1 == epoch

        def on_train_batch_end(self, batch, logs=None):
            if getattr(self, "killing", False) and batch == 1:
                die()

        engine.EpochSelection.on_epoch_begin = on_epoch_begin
        engine.EpochSelection.on_train_batch_end = on_train_batch_end
    elif point == "checkpoint":
        original_record = engine.write_record

        def write_record(folder):
            original_record(folder)
            if target in str(folder) and f"epoch-{epoch:04d}" in str(folder):
                die()  # the checkpoint's files are in its scratch folder, not yet renamed

        engine.write_record = write_record
    elif point == "before-best":
        original_best = engine.write_best

        def write_best(model, folder, entry):
            if hit(folder) and entry["epoch"] == epoch:
                die()
            return original_best(model, folder, entry)

        engine.write_best = write_best
    for name in run.split(","):
        _run(workdir, name, vocab, train, dev, "epochs=3", "seeds=2")


if __name__ == "__main__":
    main(*sys.argv[1:])
