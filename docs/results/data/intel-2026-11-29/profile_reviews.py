"""Where ours' reviews bench call goes: cProfile of one `run_once` (round 1), by phase."""
import cProfile, pstats, os, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from electra_tf.bench import finetune as fb
opts = fb.FinetuneBenchOptions(task="reviews", batches="ours", data_dir="/tmp/intel/data", round=1)
prof = cProfile.Profile()
prof.enable()
rec = fb.run_once(opts)
prof.disable()
print(rec)
st = pstats.Stats(prof); st.sort_stats("cumulative").print_stats(45)
