#!/usr/bin/env bash
# RULE.md: issue 57.2 on the AVX2 machine; the fine-tuning part of ../avx2-2026-12-01/run.sh.
# From a clone with `pip install -e ".[test]"`, run from outside the clone's root (cd /tmp).
# QA files: ../qa-2026-11-27/make_data.py, then ../qa-speed-2026-11-27/make_subset.py into $QA.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE}  # where the records go (another folder's rerun: ../avx2-finetune-2026-12-01c)
DATA=${DATA:?electra-tf download cache (absolute)}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}
lscpu > "$OUT/lscpu.txt"
electra-tf bench finetune --task reviews --impls electra_tf,pytorch --rounds 3 \
  --batches ours --data-dir "$DATA" --out "$OUT/reviews.jsonl"
electra-tf bench finetune --task long --seq 256 --train-examples 192 --dev-examples 64 \
  --epochs 1 --impls electra_tf,pytorch --rounds 3 --batches ours --data-dir "$DATA" \
  --out "$OUT/long.jsonl"
electra-tf bench qa --init "$M" --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 \
  --rounds 3 --out "$OUT/qa.jsonl"
