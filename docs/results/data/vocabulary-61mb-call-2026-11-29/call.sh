#!/bin/bash
# The whole prepare call at 61 MB, start-up included: before (c6ec2e1, tf-text's learner) and
# after (HEAD, tokenizers' trainer), alternating, 2 workers, nothing else running.
cd /tmp/v64
export TF_CPP_MIN_LOG_LEVEL=3 CUDA_VISIBLE_DEVICES=
OUT=/tmp/v64/calls.jsonl
for round in 1 2; do
  for side in after before; do
    rm -rf out-$side
    start=$(date +%s.%N)
    /usr/bin/time -f '%e %U %S %M' -o time-$side.txt env PYTHONPATH=/tmp/v64/$side /work/main/.venv/bin/python -m electra_tf.cli prepare --input c64/train.txt --output-dir out-$side --vocab-size 2000 --workers 2 --quiet > log-$side.txt 2>&1
    rc=$?
    end=$(date +%s.%N)
    read wall user sys rss < time-$side.txt
    echo "{\"kind\": \"prepare_call\", \"round\": $round, \"side\": \"$side\", \"exit\": $rc, \"wall_s\": $wall, \"user_s\": $user, \"sys_s\": $sys, \"max_rss_kb\": $rss, \"vocab_sha256\": \"$(sha256sum out-$side/vocab.txt 2>/dev/null | cut -c1-16)\"}" >> $OUT
  done
  [ "$round" = 1 ] && [ -n "$ONE" ] && break
done
