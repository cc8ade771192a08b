#!/bin/bash
# The screen's runs, in the declared order; stops starting runs after STOP_BY (epoch seconds).
HERE=$(cd "$(dirname "$0")" && pwd)
run() { [ "$(date +%s)" -lt "${STOP_BY:-9999999999}" ] && "$HERE/run_arm.sh" "$@"; }
run arm_L_s1 1 --set layerwise_decay=0.8
run arm_W_s1 1 --set warmup_fraction=0.1
run arm_E_s1 1 --set adam_epsilon=1e-6
run arm_G_s1 1 --set group_by_length=true
