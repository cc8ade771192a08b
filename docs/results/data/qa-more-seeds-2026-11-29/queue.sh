#!/bin/bash
# The study's runs in RULE.md's order, one at a time; skips finished ones.
# H: /tmp/qa-hn's run.sh (code snapshot /tmp/qa-hn/code), T: torch_qa.py here.
cd /tmp/qa-more
PY=/work/main/.venv/bin/python
for job in T:1 H:6 T:6 H:7 T:7 H:8 T:8 H:9 T:9 H:10 T:10 H:11 H:12 H:13 H:14 H:15; do
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
