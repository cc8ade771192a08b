#!/bin/bash
cd /tmp/qa-study
. /work/main/.venv/bin/activate
export TF_NUM_INTRAOP_THREADS=2 TF_NUM_INTEROP_THREADS=1 CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
for S in 1 2 3; do
  [ -f out/ours_s$S/results.json ] || ./run_ours.sh $S
  /usr/bin/time -v python torch_qa.py $S > out/torch_s$S.log 2>&1
done
echo done > out/QUEUE_DONE
