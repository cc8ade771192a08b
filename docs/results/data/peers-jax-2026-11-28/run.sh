#!/usr/bin/env bash
# From a checkout's root, its virtual environment active (test extra: jax, torch).
set -euo pipefail
here=docs/results/data/peers-jax-2026-11-28
electra-tf bench peers --recipe small --batch 32 --seq 128 --rounds 2 --budget 15 --steps 10 \
  --min-steps 4 --no-ceiling --impls pytorch electra_tf electra_tf_jax --out "$here/peers.jsonl" \
  2> >(tail -5 > "$here/table.md")
