#!/bin/bash
# The screen's runs, in the declared order; stops starting runs after STOP_BY (epoch seconds).
HERE=$(cd "$(dirname "$0")" && pwd)
run() { [ "$(date +%s)" -lt "${STOP_BY:-9999999999}" ] && "$HERE/run_arm.sh" "$@"; }
if [ -z "$1" ]; then
  run arm_L_s1 1 --set layerwise_decay=0.8
  run arm_W_s1 1 --set warmup_fraction=0.1
  run arm_E_s1 1 --set adam_epsilon=1e-6
  run arm_G_s1 1 --set group_by_length=true
fi
# added 02:49 UTC after the four seed-1 runs (the rule's "seed 2 of any arm if time is left"):
# seed 2 of the two arms whose epoch-1 dev F1 was at or near 0 (L, W). Run as queue.sh s2.
if [ "$1" = s2 ]; then
  run arm_L_s2 2 --set layerwise_decay=0.8
  run arm_W_s2 2 --set warmup_fraction=0.1
fi
# added 2026-11-29 11:45 UTC on the Intel machine: a check, then seed 2 of E and G, seed 3 of all.
# (First started 11:45 as `queue.sh s3` when the seed-1 lines above still ran for any
# argument but s2: it reran L seed 1 (test F1 0.3300, the recorded 0.330: the check) and was
# stopped during W seed 1; those lines now run only without an argument.)
if [ "$1" = s3 ]; then
  run arm_E_s2 2 --set adam_epsilon=1e-6
  run arm_G_s2 2 --set group_by_length=true
  for arm in "L layerwise_decay=0.8" "W warmup_fraction=0.1" "E adam_epsilon=1e-6" "G group_by_length=true"; do
    set -- $arm; run arm_$1_s3 3 --set $2; set -- s3
  done
fi
