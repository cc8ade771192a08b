"""Fine-tunes the engine tests' toy task in its own process, and kill -9s itself on request.

Run as `python kill_driver.py WORKDIR RUN POINT SEED EPOCH [LAYERS]`: the toy files in WORKDIR,
the run folder WORKDIR/RUN (several, comma-separated, run one after another in this process;
the kill is set up for the last one only, once the ones before it have finished or resumed).
POINT is where SIGKILL hits seed SEED in epoch EPOCH (SEED `kept`: the seed that
WORKDIR/whole kept, EPOCH its best epoch, read once the runs before the last are done;
LAYERS: the scratch encoder's, 2 unless given):

- `none`: never (the uninterrupted run, or a resume);
- `mid-epoch`: after the epoch's second batch;
- `checkpoint`: while the epoch's checkpoint is being written (its files written, the
  folder not yet published); for the last epoch (3), which writes no checkpoint, while its
  `trained.json` is (the best weights out, the history in its scratch file, not renamed);
- `before-best`: as the best weights start to be written (when the last epoch ends),
  after the epoch's checkpoint, if it has one, is published.
"""

import gc
import json
import os
import signal
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers

from finetuning.test_engine import _files, _run  # noqa: E402

from electra_tf.finetuning import engine  # noqa: E402

EPOCHS = 3


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def kept_seed_and_best_epoch(workdir):
    """The seed WORKDIR/whole kept, and that seed's best epoch."""
    results = json.loads((Path(workdir) / "whole" / "results.json").read_text())
    seed = results["kept"]["seed"]
    return seed, next(r["best_epoch"] for r in results["runs"] if r["seed"] == seed)


def main(workdir, run, point, seed, epoch, layers="2"):
    workdir, layers = Path(workdir), int(layers)
    vocab, train, dev = _files(workdir)
    *before, last = run.split(",")
    for name in before:
        _run(workdir, name, vocab, train, dev, f"epochs={EPOCHS}", "seeds=2", layers=layers)
    if seed == "kept":
        seed, epoch = kept_seed_and_best_epoch(workdir)
    seed, epoch = int(seed), int(epoch)
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
        original_atomic = engine.write_atomic

        def write_atomic(path, data):
            path = Path(path)
            if path.name == engine.TRAINED and hit(path.parent) and epoch == EPOCHS:
                path.with_name(f".{path.name}.tmp").write_text(data)
                die()  # the history is in its scratch file, not yet renamed
            return original_atomic(path, data)

        engine.write_atomic = write_atomic
    elif point == "before-best":
        original_best = engine.write_best

        def write_best(model, folder, entry):
            if hit(folder) and entry["epoch"] == epoch:
                die()
            return original_best(model, folder, entry)

        engine.write_best = write_best
    _run(workdir, last, vocab, train, dev, f"epochs={EPOCHS}", "seeds=2", layers=layers)


if __name__ == "__main__":
    main(*sys.argv[1:])
    gc.freeze()  # a quick exit, as electra_tf.cli.command's
