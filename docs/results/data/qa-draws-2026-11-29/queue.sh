#!/bin/bash
# The study's runs in RULE.md's order, one at a time under nice; skips finished runs; starts
# none that could not finish by STOP_BY (NEED: longest run so far + 60 s; 1,500 s before).
cd /tmp/qa-draws
export PYTHONPATH=/tmp/qa-head/code TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
PY=/work/main/.venv/bin/python
STOP_BY=${STOP_BY:-$(date -u -d '08:52' +%s)}
NEED=${NEED:-1500}
done_run() { grep -q "\"arm\": \"$1\", .*\"seed\": $2[,}]" results.jsonl 2>/dev/null; }
run() {  # ARM SEED
  local A=$1 S=$2
  case $A in
    H) [ -f /tmp/qa-head/out/head_s$S/results.json ] && return 0 ;;
    *) done_run $A $S && return 0 ;;
  esac
  [ $(( $(date +%s) + NEED )) -le $STOP_BY ] || { echo "$(date -u +%T) no time for $A s$S (need $NEED s)" >> queue.log; exit 0; }
  echo "$(date -u +%T) start $A s$S" >> queue.log
  T0=$(date +%s)
  case $A in
    Ph|Po) /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY draws_qa.py $S $A > ${A}_s$S.log 2>&1 ;;
    T) /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY torch_qa.py $S --arm T > T_s$S.log 2>&1 ;;
    H) (cd /tmp/qa-head && /tmp/qa-draws/run_head.sh $S) ;;
  esac
  T=$(( $(date +%s) - T0 )); [ $(( T + 60 )) -gt $NEED ] && NEED=$(( T + 60 ))
  echo "$(date -u +%T) end $A s$S ($T s)" >> queue.log
}
for R in "Ph 1" "Ph 2" "Ph 3" "T 4" "H 4" "T 5" "H 5" "Po 1" "Po 2" "Po 3"; do run $R; done
echo "$(date -u +%T) done" >> queue.log
