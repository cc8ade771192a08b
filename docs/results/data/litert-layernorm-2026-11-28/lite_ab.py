"""Paired A/B of two LiteRT exports of the same model: batch-1 p50 over 200 single texts and
batch-32 texts/s over 10 batches, 2 threads, alternating order over ROUNDS rounds.
python lite_ab.py OLD_FOLDER NEW_FOLDER TEXTS_JSON ROUNDS"""
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
from electra_tf.tasks.litert import open_litert
old, new, texts, rounds = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), int(sys.argv[4])
for r in range(1, rounds + 1):
    for name, folder in ((("old", old), ("new", new)) if r % 2 else (("new", new), ("old", old))):
        run, _ = open_litert(folder, num_threads=2)
        for t in texts[:5]:
            run([t])
        times = []
        for t in texts[:200]:
            s = time.perf_counter(); run([t]); times.append(time.perf_counter() - s)
        s = time.perf_counter()
        for i in range(10):
            run(texts[32 * i: 32 * i + 32])
        print(json.dumps({"round": r, "form": name, "batch1_p50_ms": round(1000 * float(np.median(times)), 4),
                          "batch32_texts_per_s": round(320 / (time.perf_counter() - s), 1)}), flush=True)
