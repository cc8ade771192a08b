#!/bin/bash
# After the rule (its two reported fine-tune rounds had B slower): 4 more rounds of the same
# `bench finetune --task reviews` call, A B / B A, appended to finetune-extra.jsonl.
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/startup-collector-2026-12-02
for r in 3 4 5 6; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do
    tree=/work/base; [ $t = B ] && tree=/work/expA
    rm -f /tmp/gcpause-f-$t-$r.jsonl
    echo "$(date -u +%T) finetune-extra round $r $t start" >> $OUT/when.log
    PYTHONPATH=$tree /usr/bin/time -f "{\"round\": $r, \"label\": \"$t\", \"wall_s\": %e, \"user_s\": %U, \"sys_s\": %S, \"max_rss_kb\": %M}" -a -o $OUT/finetune-extra.jsonl \
      python -m electra_tf.cli bench finetune --task reviews --impls electra_tf --rounds 1 --batches ours --data-dir /tmp/avx2data --out /tmp/gcpause-f-$t-$r.jsonl > /dev/null 2>&1
    grep '"finetune_bench"' /tmp/gcpause-f-$t-$r.jsonl | python -c "import json,sys; d=json.loads(sys.stdin.readline()); print(json.dumps({'round': $r, 'label': '$t', 'train_seconds': d['train_seconds'], 'wall_seconds': d['wall_seconds'], 'dev_accuracy': d['dev_accuracy']}))" >> $OUT/finetune-outputs.jsonl
  done
done
echo "$(date -u +%T) finetune-extra done" >> $OUT/when.log
