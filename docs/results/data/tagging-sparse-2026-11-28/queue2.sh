#!/bin/bash
# Second queue (re-ordered after the first run's speed under load): waits for queue.sh (pid 2542),
# which stops after torch_std_s1 and ours_std_s1; then paper s1 first, the remaining pairs, the rest.
while kill -0 2542 2>/dev/null; do sleep 10; done
cd /tmp/ner-sparse
. /work/main/.venv/bin/activate
STD="--set layerwise_decay=1.0 --set group_by_length=false --set warmup_fraction=0.0 --set adam_epsilon=1e-8"
T() { CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=2 python torch_ner.py --group 0 --seed $1 --name torch_std_s$1 > out/torch_std_s$1.log 2>&1; }
[ -f stop2 ] && exit 0; ./run_ours.sh ours_paper_s1 1
for s in 2 3; do
  [ -f stop2 ] && exit 0; T $s
  [ -f stop2 ] && exit 0; ./run_ours.sh ours_std_s$s $s $STD
done
for s in 2 3; do [ -f stop2 ] && exit 0; ./run_ours.sh ours_paper_s$s $s; done
[ -f stop2 ] && exit 0; ./run_ours.sh ours_std_group_s1 1 --set layerwise_decay=1.0 --set group_by_length=true --set warmup_fraction=0.0 --set adam_epsilon=1e-8
[ -f stop2 ] && exit 0; ./run_ours.sh ours_std_wu01_s1 1 --set layerwise_decay=1.0 --set group_by_length=false --set warmup_fraction=0.1 --set adam_epsilon=1e-8
[ -f stop2 ] && exit 0; ./run_ours.sh ours_std_eps6_s1 1 --set layerwise_decay=1.0 --set group_by_length=false --set warmup_fraction=0.0 --set adam_epsilon=1e-6
