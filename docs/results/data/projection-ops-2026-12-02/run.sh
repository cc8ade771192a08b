#!/usr/bin/env bash
# RULE.md: A/B of the QA train step's trace, 5 rounds A B / B A / ...; from /tmp with the venv active.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
A_TREE=${A_TREE:?checkout of A}  B_TREE=${B_TREE:?checkout of B}
M=${M:?all-MiniLM-L6-v2 folder}  QA=${QA:-/tmp/qa-bench}
export CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
python "$HERE/make_small.py" "$QA/train.json" /tmp/qa-small.json
one() {  # tree label round
  echo "$(date -u +%FT%TZ) $2 round $3 start" >> "$HERE/when.log"
  PYTHONPATH="$1" python "$HERE/probe.py" bench qa --init "$M" --train /tmp/qa-small.json \
    --dev /tmp/qa-small.json --epochs 1 --impl electra_tf > "$HERE/log-$2-$3.txt" 2>&1
  echo "{\"arm\": \"$2\", \"round\": $3, \"probe\": $(grep '^PROBE' "$HERE/log-$2-$3.txt" | cut -c7-), \"run\": $(grep '"kind": "finetune_bench"' "$HERE/log-$2-$3.txt")}" >> "$HERE/results.jsonl"
}
for r in 1 2 3 4 5; do
  if [ $((r % 2)) = 1 ]; then one "$A_TREE" A $r; one "$B_TREE" B $r; else one "$B_TREE" B $r; one "$A_TREE" A $r; fi
done
