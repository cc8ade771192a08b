#!/bin/bash
# Whole-command time, A (without_change.py) against B (as shipped), 40 steps of the demo's
# schedule, alternated A B B A; prints each run's "seconds" (run_pretraining's own clock)
# and the command's wall time.
export PATH=/work/main/.venv/bin:$PATH
H=$(dirname $(readlink -f $0)); D=/tmp/democlone2/data
ARGS="pretrain --init $D/models/all-MiniLM-L6-v2 --data $D/adapt-domain-minilm-s64 --set train.num_steps=300 --set train.checkpoint_every=50 --set train.batch_size=32 --set train.seed=1234 --set model.generator_size_fraction=0.25 --set model.weight_tying=embeddings --set train.log_every=1 --max-steps 40"
for arm in A B B A; do
  rm -rf /tmp/det/w; s=$(date +%s.%N)
  if [ $arm = A ]; then python $H/without_change.py $ARGS --output-dir /tmp/det/w > /tmp/det/w.log 2>&1
  else electra-tf $ARGS --output-dir /tmp/det/w > /tmp/det/w.log 2>&1; fi
  e=$(date +%s.%N)
  echo "$arm rc=$? run_seconds=$(grep -h '"seconds"' /tmp/det/w.log | tr -dc '0-9.') wall=$(python -c "print(round($e-$s,1))") tok_s=$(grep -h tokens_per_s /tmp/det/w.log | tail -1 | tr -dc '0-9.')"
done
