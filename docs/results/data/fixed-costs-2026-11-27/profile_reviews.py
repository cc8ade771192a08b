"""Where ours' `bench finetune` reviews call spends its time: the whole call under cProfile,
then the phases read from it (cumulative seconds of the functions that make each phase).

    python profile_reviews.py DATA_DIR OUT.json   # DATA_DIR: bench finetune's --data-dir

Same workload and settings as `electra-tf bench finetune --impl electra_tf` (700 train, 300
dev movie-review snippets, 3 epochs, batch 32, seed 1).
"""
import cProfile
import json
import os
import pstats
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from electra_tf.bench.finetune import FinetuneBenchOptions, _train_electra_tf, workload  # noqa: E402

options = FinetuneBenchOptions(data_dir=sys.argv[1], round=1)
encoder, splits, labels, _ = workload(options)
profile = cProfile.Profile()
started = time.perf_counter()
profile.enable()
seconds, scores = _train_electra_tf(options, encoder, splits, labels)
profile.disable()
wall = time.perf_counter() - started
stats = pstats.Stats(profile)
by_name = {}
for (path, line, name), (_, _, _, cumulative, _) in stats.stats.items():
    by_name.setdefault(f"{os.path.basename(path)}:{name}", 0.0)
    by_name[f"{os.path.basename(path)}:{name}"] = max(by_name[f"{os.path.basename(path)}:{name}"], cumulative)
phases = {  # cumulative seconds; nested phases overlap (fit holds the trace and the steps)
    "loading the encoder (initialization)": ["initialization.py:load_initialization"],
    "building the model": ["_text.py:build"],
    "fit (all epochs: trace, steps, callbacks)": ["trainer.py:fit"],
    "tracing (tf.function, all)": ["polymorphic_function.py:_initialize",
                                   "tracing_compilation.py:_maybe_define_function"],
    "dev scoring per epoch (predict)": ["_text.py:score"],
    "epoch ends (callbacks: all below)": ["engine.py:on_epoch_end"],
    "per-epoch checkpoints": ["engine.py:_write_epoch"],
    "best weights (each better epoch)": ["engine.py:write_best"],
    "non-finite weight check": ["checkpoint_checks.py:first_nonfinite_weight"],
    "first train-step trace": ["trainer.py:multi_step_on_iterator"],
    "kept model folder": ["model_folder.py:write_model_folder"],
    "predictions files": ["_text.py:predictions"],
}
report = {"wall_s": round(wall, 2), "bench_seconds": round(seconds, 2), "scores": scores,
          "phases_s": {phase: round(max((by_name.get(n, 0.0) for n in names), default=0.0), 2)
                       for phase, names in phases.items()},
          "top_electra_tf": sorted(((round(v, 2), k) for k, v in by_name.items()), reverse=True)[:40]}
json.dump(report, open(sys.argv[2], "w"), indent=1)
print(json.dumps({k: report[k] for k in ("wall_s", "phases_s")}, indent=1))
