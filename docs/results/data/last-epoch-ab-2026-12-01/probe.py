"""Runs an `electra-tf` command (argv) with timers around the fine-tuning call's writes.
Prints PHASE lines to stderr, and which tree's package ran."""
import atexit, collections, functools, importlib, sys, time
spent = collections.defaultdict(float); calls = collections.Counter()
def wrap(modname, attr):
    mod = importlib.import_module(modname)
    owner, name = (mod, attr) if "." not in attr else (getattr(mod, attr.split(".")[0]), attr.split(".")[1])
    f = getattr(owner, name)
    @functools.wraps(f)
    def timed(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally: spent[attr] += time.perf_counter() - t; calls[attr] += 1
    setattr(owner, name, timed)
import electra_tf
print(f"PHASE package {electra_tf.__file__}", file=sys.stderr)
for attr in ("train_seed", "_write_checkpoint", "write_best", "EpochSelection.on_epoch_end",
             "EpochSelection.wait_for_checkpoint"):
    wrap("electra_tf.finetuning.engine", attr)
wrap("electra_tf.finetuning.run", "finetune")
@atexit.register
def report():
    for k, v in sorted(spent.items(), key=lambda x: -x[1]):
        print(f"PHASE {k}: {v:.2f} s in {calls[k]} calls", file=sys.stderr)
sys.argv = ["electra-tf"] + sys.argv[1:]
from electra_tf.cli import main
main()
