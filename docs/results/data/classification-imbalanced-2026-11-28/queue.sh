#!/bin/bash
# Runs the arms in RULE.md's order after T s1 (already running as pid $1), one at a time.
# A run starts only before its cutoff (so it ends by 20:10 UTC); touch /tmp/cls5/stop to end the queue.
cd /tmp/cls5
while kill -0 $1 2>/dev/null; do sleep 10; done
start() {  # start CUTOFF_HHMM CMD...
  local cutoff=$1; shift
  [ -e stop ] && { echo "$(date -u +%T) stop file: not starting $*"; return; }
  [ "$(date -u +%H%M)" \> "$cutoff" ] && { echo "$(date -u +%T) past $cutoff: not starting $*"; return; }
  echo "$(date -u +%T) start $*"; "$@"; echo "$(date -u +%T) end $*"
}
start 1958 ./run_ours.sh ours_std_s1 1
start 2002 ./run_ours.sh ours_paper_s1 1 --set defaults=paper
for s in 2 3; do
  start 1950 ./run_torch.sh $s
  start 1958 ./run_ours.sh ours_std_s$s $s
  start 2002 ./run_ours.sh ours_paper_s$s $s --set defaults=paper
done
