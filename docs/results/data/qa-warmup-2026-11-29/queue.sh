#!/bin/bash
# RULE.md's runs in its order, one at a time; skips finished ones; no start after 17:50 UTC.
D=$(cd "$(dirname "$0")" && pwd)
cd /tmp/qa-more
PY=/work/main/.venv/bin/python
for job in HW:1 TD:6 HW:2 TD:7 HW:3 TD:8 HW:4 TD:9 HW:5 TD:10 HW:6 TD:11 HW:7 TD:12 HW:8 TD:13 HW:9 TD:14 HW:10 TD:15; do
  [ $(date -u +%H%M) -lt 1750 ] || { echo "$(date -u +%T) 17:50 reached: no more runs" >> $D/queue.log; break; }
  A=${job%%:*}; S=${job##*:}
  if [ $A = HW ]; then [ -f /tmp/qa-hn/out/hw_s$S/results.json ] && continue
  else grep -q "\"arm\": \"TD\".*\"seed\": $S," results.jsonl 2>/dev/null && continue; fi
  echo "$(date -u +%T) start $A s$S" >> $D/queue.log; T0=$(date +%s)
  if [ $A = HW ]; then bash $D/run_hw.sh $S
  else (export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
        /usr/bin/time -f '%e s wall %U+%S cpu' $PY torch_qa.py $S --warmup 0 --eps 1e-8 --arm TD > TD_s$S.log 2>&1); fi
  echo "$(date -u +%T) end $A s$S ($(( $(date +%s) - T0 )) s)" >> $D/queue.log
done
echo "$(date -u +%T) done" >> $D/queue.log
