#!/bin/bash
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/exit-freeze-2026-12-02
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do
    tree=/work/base; [ $t = B ] && tree=/work/main
    rm -rf /tmp/pt-$t
    PYTHONPATH=$tree /usr/bin/time -f "{\"round\": $r, \"label\": \"$t\", \"wall_s\": %e, \"user_s\": %U, \"sys_s\": %S}" -a -o $OUT/pretrain-times.jsonl \
      python -m electra_tf.cli pretrain --recipe tiny --data /tmp/exitfreeze-A-1 --output-dir /tmp/pt-$t --steps 4 --verbose 0 > /dev/null 2>&1
    echo "{\"round\": $r, \"label\": \"$t\", \"last_run\": $(python -c "import json;d=json.load(open('/tmp/pt-$t/last_run.json'));print(json.dumps({'step': d['step'], 'loss': d['logs']['loss']}))")}" >> $OUT/pretrain-outputs.jsonl
  done
done
