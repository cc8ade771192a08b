#!/usr/bin/env bash
# RULE.md: bench peers, PyTorch (fused AdamW) against ours, 3 rounds; venv active, from /tmp.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
echo "$(date -u +%FT%TZ) start" > "$HERE/when.log"
electra-tf bench peers --recipe small --batch 32 --seq 128 --rounds 3 --budget 45 \
  --impls pytorch electra_tf --out "$HERE/peers.jsonl" > "$HERE/peers.log" 2>&1
echo "$(date -u +%FT%TZ) end" >> "$HERE/when.log"
