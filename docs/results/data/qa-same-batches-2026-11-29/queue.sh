#!/bin/bash
# Seeds 1, 2, 3: capture (arm H's batches), then Pm, then Pu; one process at a time under nice;
# skips finished runs (results.jsonl) and stops before a run that could not finish by STOP_BY
# (05:08 UTC); NEED = the longest run so far + 60 s (900 s before the first).
cd /tmp/qa-same
export PYTHONPATH=/tmp/qa-head/code TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
PY=/work/main/.venv/bin/python
STOP_BY=${STOP_BY:-$(date -u -d '05:08' +%s)}
NEED=${NEED:-900}
for S in 1 2 3; do
  if [ ! -f batches_s$S.npz ]; then
    [ $(( $(date +%s) + 60 + NEED )) -le $STOP_BY ] || { echo "$(date -u +%T) no time for s$S" >> queue.log; exit 0; }
    echo "$(date -u +%T) capture s$S" >> queue.log
    /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY same_batches_qa.py capture $S > capture_s$S.log 2>&1
  fi
  for A in Pm Pu; do
    grep -q "\"arm\": \"$A\", \"seed\": $S," results.jsonl 2>/dev/null && continue
    [ $(( $(date +%s) + NEED )) -le $STOP_BY ] || { echo "$(date -u +%T) no time for $A s$S (need $NEED s)" >> queue.log; exit 0; }
    echo "$(date -u +%T) start $A s$S" >> queue.log
    T0=$(date +%s)
    /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY same_batches_qa.py torch $S $A > ${A}_s$S.log 2>&1
    T=$(( $(date +%s) - T0 )); [ $(( T + 60 )) -gt $NEED ] && NEED=$(( T + 60 ))
    echo "$(date -u +%T) end $A s$S ($T s)" >> queue.log
  done
done
echo "$(date -u +%T) done" >> queue.log
