import cProfile, pstats, os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from electra_tf.bench import question_answering as qb
o = qb.QaBenchOptions(init="/tmp/democlone/data/models/all-MiniLM-L6-v2", train="/tmp/qa-bench/train.json", dev="/tmp/qa-bench/dev.json", epochs=2, round=1)
qb.windows_and_examples(o, "train")  # imports outside
prof = cProfile.Profile(); prof.enable()
rec = qb.run_once(o)
prof.disable(); print(rec)
st = pstats.Stats(prof); st.sort_stats("cumulative")
for f in ("finetune_files", "_train_seeds", "train_seed", "on_epoch_end", "fit_rows", "def fit"):
    st.print_callees(f)
st.print_stats(30)
