#!/bin/bash
# The second stage's runs in RULE2.md's order, one at a time; skips finished ones.
# H: /tmp/qa-hn's run.sh (code snapshot /tmp/qa-hn/code), T: torch_qa.py here.
cd /tmp/qa-more
PY=/work/main/.venv/bin/python
for job in T:11 H:16 T:12 H:17 T:13 H:18 T:14 H:19 T:15 H:20 T:16 H:21 T:17 H:22 T:18 H:23 H:24 H:25 H:26 H:27 H:28; do
  [ $(date -u +%H%M) -lt 1545 ] || { echo "$(date -u +%T) 15:45 reached: no more runs" >> queue.log; break; }
  A=${job%%:*}; S=${job##*:}
  if [ $A = H ]; then [ -f /tmp/qa-hn/out/h_s$S/results.json ] && continue
  else grep -q "\"seed\": $S[,}]" results.jsonl 2>/dev/null && continue; fi
  echo "$(date -u +%T) start $A s$S" >> queue.log; T0=$(date +%s)
  if [ $A = H ]; then (cd /tmp/qa-hn && ./run.sh h $S)
  else (export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
        /usr/bin/time -f '%e s wall %U+%S cpu' $PY torch_qa.py $S --arm T > T_s$S.log 2>&1); fi
  echo "$(date -u +%T) end $A s$S ($(( $(date +%s) - T0 )) s)" >> queue.log
done
echo "$(date -u +%T) done" >> queue.log
