#!/usr/bin/env bash
# RULE.md: stage e's QA command with the mended PyTorch loop. Run from outside the clone (cd /tmp).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}
lscpu > "$HERE/lscpu.txt"
electra-tf bench qa --init "$M" --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 \
  --rounds 3 --out "$HERE/qa.jsonl"
