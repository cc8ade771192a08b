"""Runs an `electra-tf` command (argv) with timers around a fine-tuning call's fixed costs
(the encoder's load, the epoch ends, the writes); a timer whose function one tree lacks is
left out. Prints PHASE lines to stderr, and which tree's package ran."""
import atexit, collections, functools, importlib, sys, time
spent = collections.defaultdict(float); calls = collections.Counter()
def wrap(modname, attr):
    mod = importlib.import_module(modname)
    owner, name = (mod, attr) if "." not in attr else (getattr(mod, attr.split(".")[0]), attr.split(".")[1])
    f = getattr(owner, name, None)
    if f is None:
        return
    @functools.wraps(f)
    def timed(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally: spent[attr] += time.perf_counter() - t; calls[attr] += 1
    setattr(owner, name, timed)
import electra_tf
print(f"PHASE package {electra_tf.__file__}", file=sys.stderr)
for attr in ("_write_checkpoint", "_best_weights", "write_best", "EpochSelection.on_epoch_end",
             "EpochSelection._write_epoch", "EpochSelection.wait_for_checkpoint"):
    wrap("electra_tf.finetuning.engine", attr)
wrap("electra_tf.tasks.initialization", "load_initialization")
wrap("electra_tf.finetuning.run", "finetune")
@atexit.register
def report():
    for k, v in sorted(spent.items(), key=lambda x: -x[1]):
        print(f"PHASE {k}: {v:.2f} s in {calls[k]} calls", file=sys.stderr)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
