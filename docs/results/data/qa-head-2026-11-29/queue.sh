#!/bin/bash
# Seeds 1, 2, 3 of arm H, one process at a time; skips finished runs; stops before a run
# that could not finish by STOP_BY (01:55 UTC; NEED seconds a run may take under load).
cd /tmp/qa-head
D=/work/wt/q1/docs/results/data/qa-head-2026-11-29
STOP_BY=${STOP_BY:-$(date -u -d '01:55' +%s)}
NEED=${NEED:-950}
for S in 1 2 3; do
  [ -f out/head_s$S/results.json ] && continue
  [ $(( $(date +%s) + NEED )) -le $STOP_BY ] || { echo "$(date -u +%T) no time for H s$S" >> out/queue.log; exit 0; }
  echo "$(date -u +%T) start H s$S" >> out/queue.log
  $D/run_head.sh $S; echo "$(date -u +%T) end H s$S" >> out/queue.log
done
echo "$(date -u +%T) done" >> out/queue.log
