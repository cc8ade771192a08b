#!/usr/bin/env bash
# RULE.md: export of a fine-tuned run, A = ELECTRA_TF_OP_STACKS=1, B = unset; 3 rounds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RUN:-/tmp/serve/run}  OUT=${OUT:-/tmp/export-ab}
rm -rf "$OUT"; mkdir -p "$OUT"
one() {  # arm round
  local env=(); [ "$1" = A ] && env=(ELECTRA_TF_OP_STACKS=1)
  env "${env[@]}" /usr/bin/time -f '{"arm": "%C", "wall_s": %e, "user_s": %U, "sys_s": %S}' \
    -o "$HERE/time-$1-$2.json" electra-tf export --checkpoint "$RUN" --out "$OUT/$1$2" \
    > "$HERE/log-$1-$2.txt" 2>&1
}
one A 1; one B 1; one B 2; one A 2; one A 3; one B 3
for f in "$OUT"/*/run/1/saved_model.pb; do sha256sum "$f"; done > "$HERE/saved_model_pb.sha256"
