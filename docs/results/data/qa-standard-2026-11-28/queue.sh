#!/bin/bash
# Interleaved by seed: S s1, TD s1, S s2, TD s2, S s3, TD s3 (one process at a time).
# Skips finished runs; stops before a run that could not finish by STOP_BY (epoch seconds).
cd /tmp/qa-std
D=/work/wt/qastd/docs/results/data/qa-standard-2026-11-28
export PYTHONPATH=/work/wt/qastd
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=2 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
STOP_BY=${STOP_BY:-$(date -u -d '20:10' +%s)}
NEED=${NEED:-900}   # seconds one run may take under load
ok() { [ $(( $(date +%s) + NEED )) -le $STOP_BY ] || { echo "no time for $1" >> out/queue.log; exit 0; }; }
for S in 1 2 3; do
  if [ ! -f out/ours_s$S/results.json ]; then
    ok "S s$S"; echo "$(date -u +%T) start S s$S" >> out/queue.log
    $D/run_ours.sh $S; echo "$(date -u +%T) end S s$S" >> out/queue.log
  fi
  if ! grep -q "\"arm\": \"TD\", \"warmup\": 0.0, \"eps\": 1e-08, \"seed\": $S," results.jsonl 2>/dev/null; then
    ok "TD s$S"; echo "$(date -u +%T) start TD s$S" >> out/queue.log
    /usr/bin/time -f '%e s wall %U+%S cpu' /work/main/.venv/bin/python $D/torch_qa.py $S --warmup 0 --eps 1e-8 --arm TD > out/td_s$S.log 2>&1
    echo "$(date -u +%T) end TD s$S" >> out/queue.log
  fi
done
echo "$(date -u +%T) done" >> out/queue.log
