"""Cold and warm starts of `pretrain --backend jax` (JAX's persistent compilation cache).

python cache.py DATA_GLOB VOCAB OUT_DIR [PAIRS]   # prints and appends results.jsonl
"""

import json
import os
import shutil
import subprocess
import sys
import time


def once(data, vocab, out, cache, label, number):
    run = os.path.join(out, f"run-{label}-{number}")
    shutil.rmtree(run, ignore_errors=True)
    command = [
        sys.executable,
        "-m",
        "electra_tf.cli",
        "pretrain",
        "--backend",
        "jax",
        "--recipe",
        "small",
        "--data",
        data,
        "--vocab-file",
        vocab,
        "--steps",
        "2",
        "--batch-size",
        "8",
        "--verbose",
        "0",
        "--output-dir",
        run,
        "--set",
        "model.max_sequence_length=64",
        "--set",
        "data.sequence_length=64",
        "--set",
        "train.checkpoint_every=1000",
    ]
    env = dict(os.environ, XDG_CACHE_HOME=cache, TF_CPP_MIN_LOG_LEVEL="3", JAX_LOG_COMPILES="1")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-3000:]
    files = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs]
    said = done.stderr.splitlines()
    hits = [line.split("'")[1] for line in said if "Persistent compilation cache hit" in line]
    compiled = [line for line in said if "Finished XLA compilation of" in line]
    record = {
        "start": label,
        "pair": number,
        "wall_s": round(wall, 2),
        "cache_files": len(files),
        "cache_bytes": sum(os.path.getsize(f) for f in files),
        "cache_hits": hits,
        "xla_compilations": len(compiled),
    }
    print(json.dumps(record), flush=True)
    with open(os.path.join(out, "results.jsonl"), "a") as handle:
        handle.write(json.dumps(record) + "\n")


def main(data, vocab, out, pairs=3):
    os.makedirs(out, exist_ok=True)
    for number in range(1, int(pairs) + 1):
        cache = os.path.join(out, f"cache-{number}")
        shutil.rmtree(cache, ignore_errors=True)
        once(data, vocab, out, cache, "cold", number)
        once(data, vocab, out, cache, "warm", number)


if __name__ == "__main__":
    main(*sys.argv[1:])
