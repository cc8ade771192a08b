#!/usr/bin/env bash
# RULE.md: the best weights without the optimizer's state, with the two load cuts; A = $A_TREE
# (c6d8302), B = $B_TREE (43a7f51). From outside the trees (cd /tmp), virtual environment active.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
A_TREE=${A_TREE:?a checkout of c6d8302}  B_TREE=${B_TREE:?a checkout of 43a7f51}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}
lscpu > "$HERE/lscpu.txt"
one() {  # workload arm round
  local tree=$A_TREE; [ "$2" = B ] && tree=$B_TREE
  echo "$(date -u +%H:%M:%S) $1 $2 $3" >> "$HERE/when.log"
  if [ "$1" = reviews ]; then
    PYTHONPATH=$tree python "$HERE/probe.py" bench finetune --impl electra_tf --task reviews \
      --round "$3" --data-dir "$DATA" > "$HERE/log-$1-$2-$3.txt" 2>&1
  else
    PYTHONPATH=$tree python "$HERE/probe.py" bench qa --impl electra_tf --init "$M" \
      --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 --round "$3" \
      > "$HERE/log-$1-$2-$3.txt" 2>&1
  fi
}
for w in reviews qa; do
  one $w A 1; one $w B 1; one $w B 2; one $w A 2; one $w A 3; one $w B 3; one $w B 4; one $w A 4
done
echo "$(date -u +%H:%M:%S) done" >> "$HERE/when.log"
