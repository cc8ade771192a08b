#!/bin/bash
# One run of the study outside queue.sh's order: ./one.sh ARM SEED (same environment and logging).
cd /tmp/qa-draws
export PYTHONPATH=/tmp/qa-head/code TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
PY=/work/main/.venv/bin/python
A=$1; S=$2; echo "$(date -u +%T) start $A s$S (one.sh)" >> queue.log; T0=$(date +%s)
case $A in
  Ph|Po) /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY draws_qa.py $S $A > ${A}_s$S.log 2>&1 ;;
  T) /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY torch_qa.py $S --arm T > T_s$S.log 2>&1 ;;
  H) (cd /tmp/qa-head && /tmp/qa-draws/run_head.sh $S) ;;
esac
echo "$(date -u +%T) end $A s$S ($(( $(date +%s) - T0 )) s)" >> queue.log
