#!/usr/bin/env bash
# The split-bias A/B: exports of build.py by the code before (WORK_OLD) and after (WORK_NEW) the
# commit that gives each lane product its share of the bias, bytokens.py on each, 3 rounds
# alternating -> fused_ab.jsonl ("work": which export). fused_mm.py: one bfloat16 product at
# 24 rows with constant weights, bare and with a bias (1 thread, us per product).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
for r in 1 2 3; do
  for w in "${WORK_OLD:-/tmp/bfx}" "${WORK_NEW:-/tmp/bfx2}"; do for f in bf16_1 plain; do
    WORK="$w" python "$HERE/bytokens.py" "$f" 2>/dev/null | sed "s#{#{\"work\": \"$(basename "$w")\", \"round\": $r, #"
  done; done
done
