#!/usr/bin/env bash
# RULE.md: reviews fine-tune, ours only, A = ELECTRA_TF_OP_STACKS=1, B = unset; 3 rounds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
lscpu > "$HERE/lscpu.txt"
one() {  # arm round
  local env=(); [ "$1" = A ] && env=(ELECTRA_TF_OP_STACKS=1)
  env "${env[@]}" /usr/bin/time -v -o "$HERE/time-$1-$2.txt" electra-tf bench finetune \
    --impl electra_tf --task reviews --round "$2" --data-dir "$DATA" \
    --out "$HERE/reviews-$1.jsonl" > "$HERE/log-$1-$2.txt" 2>&1
}
one A 1; one B 1; one B 2; one A 2; one A 3; one B 3
