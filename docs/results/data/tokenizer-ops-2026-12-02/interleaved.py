"""Both exports in one process, their batch-1 calls interleaved: A's and B's
`serving_default` (exported by probe.py into WORK_A and WORK_B) called alternately on the
same texts, 2 intra-op threads, 1 inter-op; 30 warm-up calls each, then BLOCKS blocks of
100 calls per export, the order within each pair of blocks alternating. Prints one JSON
line: per block the median ms, and the ops each call runs (RunMetadata step stats).

    python interleaved.py WORK_A WORK_B [BLOCKS]
"""

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def main(work_a: Path, work_b: Path, blocks: int) -> None:
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - the tokenizer's ops

    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    served = {}
    for name, work in (("A", work_a), ("B", work_b)):
        version = next((work / "saved_model").glob("*/*/saved_model.pb")).parent
        served[name] = tf.saved_model.load(str(version)).signatures["serving_default"]
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghij"), size=5)) for _ in range(200)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(8, 40)))) for _ in range(100)]
    inputs = [tf.constant(texts[i : i + 1]) for i in range(100)]
    for f in served.values():
        for x in inputs[:30]:
            f(text=x)
    out = {"A": [], "B": []}
    for block in range(blocks):
        order = ("A", "B") if block % 2 == 0 else ("B", "A")
        for name in order:
            times = []
            for x in inputs:
                start = time.perf_counter()
                served[name](text=x)
                times.append((time.perf_counter() - start) * 1e3)
            out[name].append(round(statistics.median(times), 4))
    ratios = [b / a for a, b in zip(out["A"], out["B"])]
    print(json.dumps({"block_median_ms": out, "ratio_b_over_a": [round(r, 4) for r in ratios],
                      "median_ratio": round(statistics.median(ratios), 4)}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 10)
