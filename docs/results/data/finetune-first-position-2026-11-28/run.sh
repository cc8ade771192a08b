#!/usr/bin/env bash
# Fine-tuning and serving after the fused optimizer loop and the first-position last block
# (docs/results/finetuning.md, docs/results/serving.md), from a clone with
# `pip install -e ".[test]"` and the data of docs/results/finetuning.md. 2 CPU cores, about
# 50 minutes. BASE: a checkout of bf232f0 (before both changes), for the step's A/B.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:-data}
BASE=${BASE:?a checkout of bf232f0}
: > "$HERE/step.jsonl"
for round in 1 2 3; do  # one step at [32, 40]: before, after, PyTorch, alternating
  PYTHONPATH="$BASE" python "$HERE/step.py" 40 ours "$DATA" | grep '"impl"' \
    | sed 's/"impl": "electra_tf"/"impl": "electra_tf before"/' >> "$HERE/step.jsonl"
  python "$HERE/step.py" 40 ours "$DATA" | grep '"impl"' >> "$HERE/step.jsonl"
  python "$HERE/step.py" 40 torch "$DATA" | grep '"impl"' >> "$HERE/step.jsonl"
done
electra-tf bench finetune --task reviews --impls electra_tf,pytorch --rounds 3 --batches ours \
  --data-dir "$DATA" --out "$HERE/reviews.jsonl"
electra-tf bench finetune --task long --seq 256 --train-examples 192 --dev-examples 64 \
  --epochs 1 --impls electra_tf,pytorch --rounds 3 --batches ours --data-dir "$DATA" \
  --out "$HERE/long.jsonl"
