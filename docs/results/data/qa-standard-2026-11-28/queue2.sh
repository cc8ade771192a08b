#!/bin/bash
# Replaces queue.sh from 19:18 UTC (see RULE.md, "Order change"): TD s1 took about 35 minutes
# under load, so TD s2 could not finish by 20:10. Waits for TD s1 (pid $1) to end, then runs
# S s2 and S s3, each only if it can finish by STOP_BY (NEED seconds a run of ours takes).
cd /tmp/qa-std
D=/work/wt/qastd/docs/results/data/qa-standard-2026-11-28
STOP_BY=${STOP_BY:-$(date -u -d '20:10' +%s)}
NEED=${NEED:-1000}
while kill -0 "$1" 2>/dev/null; do sleep 5; done
echo "$(date -u +%T) TD s1 ended (queue2)" >> out/queue.log
for S in 2 3; do
  [ -f out/ours_s$S/results.json ] && continue
  [ $(( $(date +%s) + NEED )) -le $STOP_BY ] || { echo "no time for S s$S" >> out/queue.log; exit 0; }
  echo "$(date -u +%T) start S s$S" >> out/queue.log
  $D/run_ours.sh $S; echo "$(date -u +%T) end S s$S" >> out/queue.log
done
echo "$(date -u +%T) done" >> out/queue.log
