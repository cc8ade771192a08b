#!/usr/bin/env bash
# From a checkout's root, its virtual environment active (test extra: torch, tf-models-official).
# The pre-training step after the backend change (issue 54): ours on TensorFlow against
# Model Garden's ElectraPretrainer and Hugging Face's PyTorch ELECTRA, the small recipe,
# batch 32 x 128, each run in its own process, 3 rounds, order reversed in odd rounds.
set -euo pipefail
here=docs/results/data/peers-mg-2026-11-28
lscpu > "$here/lscpu.txt"
electra-tf bench peers --recipe small --batch 32 --seq 128 --rounds 3 --budget 15 --steps 10 \
  --min-steps 4 --no-ceiling --impls model_garden pytorch electra_tf --out "$here/peers.jsonl" \
  2> >(tail -6 > "$here/table.md")
