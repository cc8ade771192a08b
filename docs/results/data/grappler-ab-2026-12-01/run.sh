#!/usr/bin/env bash
# RULE.md: Grappler's meta-optimizer on (A) and off (B), reviews and QA, 3 rounds each.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}
one() {  # workload arm round
  local meta=""; [ "$2" = B ] && meta=1
  if [ "$1" = reviews ]; then
    NO_META=$meta python "$HERE/probe.py" bench finetune --impl electra_tf --task reviews \
      --round "$3" --data-dir "$DATA" > "$HERE/log-$1-$2-$3.txt" 2>&1
  else
    NO_META=$meta python "$HERE/probe.py" bench qa --impl electra_tf --init "$M" \
      --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 --round "$3" \
      > "$HERE/log-$1-$2-$3.txt" 2>&1
  fi
}
for w in reviews qa; do one $w A 1; one $w B 1; one $w B 2; one $w A 2; one $w A 3; one $w B 3; done
