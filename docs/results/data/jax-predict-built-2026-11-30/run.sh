#!/usr/bin/env bash
# RULE.md's runs: A = a worktree at 9875437 (OLD), B = this code (NEW); the venv of NEW active.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NEW=${NEW:-/work/main} OLD=${OLD:-/work/wt-old}
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=3
cd /tmp
for round in 1 2; do
  arms="A B"; [ $round = 2 ] && arms="B A"
  for arm in $arms; do
    code=$NEW; [ $arm = A ] && code=$OLD
    echo "{\"arm\": \"$arm\", \"round\": $round, \"r\": $(ARM=$arm LOGITS=/tmp/logits-$arm-$round.npy PYTHONPATH=$code python "$HERE/predict_probe.py" 300 2>/dev/null | tail -1)}" >> "$HERE/results.jsonl"
  done
done
python -c "import numpy as np; a, b = np.load('/tmp/logits-A-1.npy'), np.load('/tmp/logits-B-1.npy'); print('max abs logit difference A vs B', float(np.abs(a - b).max()))" | tee "$HERE/logits.txt"
