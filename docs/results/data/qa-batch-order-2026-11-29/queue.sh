#!/bin/bash
# RULE.md's order, one run at a time under nice, from /tmp/qa-po (data -> the study's files,
# same_batches_qa.py with OUT=/tmp/qa-po, draws_qa.py, batches_s1.npz from qa-same-batches);
# skips finished runs (results.jsonl); no start after STOP_BY (23:00 UTC).
cd /tmp/qa-po
export PYTHONPATH=/tmp/qa-hn/code TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
PY=/work/main/.venv/bin/python
STOP_BY=$(date -u -d '23:00' +%s)
for S in 2 3 4 5; do
  [ -f batches_s$S.npz ] && continue
  echo "$(date -u +%T) capture s$S" >> queue.log
  /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY same_batches_qa.py capture $S > capture_s$S.log 2>&1
done
for S in 1 2 3 4 5; do
  for A in Pm Po; do
    grep -q "\"arm\": \"$A\", \"seed\": $S," results.jsonl 2>/dev/null && continue
    [ $(date +%s) -le $STOP_BY ] || { echo "$(date -u +%T) not run: $A s$S" >> queue.log; continue; }
    echo "$(date -u +%T) start $A s$S" >> queue.log; T0=$(date +%s)
    if [ $A = Pm ]; then /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY same_batches_qa.py torch $S Pm > Pm_s$S.log 2>&1
    else /usr/bin/time -f '%e s wall %U+%S cpu' nice $PY draws_qa.py $S Po > Po_s$S.log 2>&1; fi
    echo "$(date -u +%T) end $A s$S ($(( $(date +%s) - T0 )) s)" >> queue.log
  done
done
echo "$(date -u +%T) done" >> queue.log
