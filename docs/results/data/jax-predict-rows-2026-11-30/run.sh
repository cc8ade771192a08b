#!/usr/bin/env bash
# RULE.md's runs: A = a worktree at af220fa (OLD), B = this code (NEW); NEW's venv active.
# DATA = the electra-tf download folder with the demo's MiniLM and reviews (bench finetune's).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NEW=${NEW:-/work/main} OLD=${OLD:-/work/wt-old} DATA=${DATA:-/tmp/democlone/data}
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=3
cd /tmp
for round in 1 2; do
  arms="A B"; [ $round = 2 ] && arms="B A"
  for arm in $arms; do
    code=$NEW; [ $arm = A ] && code=$OLD
    ARM=$arm LOGITS=/tmp/rows-$arm-$round.npy PYTHONPATH=$code \
      python "$HERE/rows_probe.py" "$DATA" 2>/dev/null | tail -1 >> "$HERE/results.jsonl"
  done
done
python - "$HERE" <<'PY' | tee "$HERE/summary.txt"
import json, sys, numpy as np
here = sys.argv[1]
rows = [json.loads(line) for line in open(f"{here}/results.jsonl")]
for r in rows:
    print(r["arm"], "pass 1", r["pass1_s"], "s, pass 2", r["pass2_s"], "s")
for rnd in (1, 2):
    a, b = rows[2 * rnd - 2], rows[2 * rnd - 1]
    a, b = (a, b) if a["arm"] == "A" else (b, a)
    print(f"round {rnd}: pass 1 A/B {a['pass1_s'] / b['pass1_s']:.2f}x, pass 2 B/A {b['pass2_s'] / a['pass2_s']:.2f}")
diff = max(float(np.abs(np.load(f"/tmp/rows-A-{r}.npy") - np.load(f"/tmp/rows-B-{r}.npy")).max()) for r in (1, 2))
print("max abs logit difference A vs B:", diff)
PY
