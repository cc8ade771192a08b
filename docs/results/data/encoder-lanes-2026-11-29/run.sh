#!/usr/bin/env bash
# RULE.md's bench: 3 processes uncapped, then 3 with oneDNN capped to AVX2; from a clone with
# `pip install -e ".[test]"`.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
lscpu > "$HERE/lscpu.txt"
for i in 1 2 3; do
  electra-tf bench serving --recipe small --batches 1 32 --seq 128 >> "$HERE/uncapped.jsonl"
done
for i in 1 2 3; do
  ONEDNN_MAX_CPU_ISA=AVX2 electra-tf bench serving --recipe small --batches 1 32 --seq 128 \
    >> "$HERE/avx2.jsonl"
done
