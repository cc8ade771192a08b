#!/usr/bin/env bash
# RULE.md's runs (run from /tmp; DATA the download cache, QA the bench's QA files).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:?electra-tf download cache (absolute)}
QA=${QA:-/tmp/qa-bench}  M=${M:-$DATA/models/all-MiniLM-L6-v2}
electra-tf bench finetune --task reviews --impls electra_tf,pytorch --rounds 3 \
  --batches ours --data-dir "$DATA" --out "$HERE/reviews.jsonl"
electra-tf bench finetune --task long --seq 256 --train-examples 192 --dev-examples 64 \
  --epochs 1 --impls electra_tf,pytorch --rounds 3 --batches ours --data-dir "$DATA" \
  --out "$HERE/long.jsonl"
electra-tf bench qa --init "$M" --train "$QA/train.json" --dev "$QA/dev.json" --epochs 2 \
  --rounds 3 --out "$HERE/qa.jsonl"
for round in 1 2 3; do   # float32 GEMM: PyTorch (MKL) and TensorFlow (oneDNN)
  python "$HERE/../zen5-2026-11-28/mm.py" torch >> "$HERE/matmul.jsonl"
  python "$HERE/../zen5-2026-11-28/mm.py" tf >> "$HERE/matmul.jsonl"
done
