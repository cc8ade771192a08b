#!/usr/bin/env bash
# RULE.md: the two load cuts; A = $A_TREE (865a060), B = $B_TREE.
# Run from outside the trees (cd /tmp), with the package's virtual environment active.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
A_TREE=${A_TREE:?a checkout of 865a060}  B_TREE=${B_TREE:?a checkout of the change}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}
lscpu > "$HERE/lscpu.txt"
one() {  # workload arm round
  local tree=$A_TREE; [ "$2" = B ] && tree=$B_TREE
  if [ "$1" = reviews ]; then
    PYTHONPATH=$tree python "$HERE/../fixed-costs-ab-2026-12-01/probe.py" bench finetune --impl electra_tf --task reviews \
      --round "$3" --data-dir "$DATA" > "$HERE/log-$1-$2-$3.txt" 2>&1
  else
    PYTHONPATH=$tree python "$HERE/../fixed-costs-ab-2026-12-01/probe.py" bench qa --impl electra_tf --init "$M" \
      --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 --round "$3" \
      > "$HERE/log-$1-$2-$3.txt" 2>&1
  fi
}
for w in reviews qa; do one $w A 1; one $w B 1; one $w B 2; one $w A 2; one $w A 3; one $w B 3; done
