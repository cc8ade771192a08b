#!/bin/bash
# RULE.md: A = /work/base (807f335), B = /work/expA (baa27c8: the collector paused while the frameworks load).
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/startup-collector-2026-12-02
V=${V:-/tmp/avx2data/models/all-MiniLM-L6-v2/vocab.txt}
IN=${IN:-/tmp/avx2data/corpora/movieReviewSnippets_GroundTruth.txt}
timed() {  # label round file command...
  local t=$1 r=$2 f=$3; shift 3
  local tree=/work/base; [ $t = B ] && tree=/work/expA
  echo "$(date -u +%T) $f round $r $t start" >> $OUT/when.log
  PYTHONPATH=$tree /usr/bin/time -f "{\"round\": $r, \"label\": \"$t\", \"wall_s\": %e, \"user_s\": %U, \"sys_s\": %S, \"max_rss_kb\": %M}" \
    -a -o $OUT/$f.jsonl "$@"
}
same() {  # round file folderA folderB
  ( cd $3 && find . -type f ! -name prepare_report.json | sort | xargs sha256sum ) > /tmp/a.sums
  ( cd $4 && find . -type f ! -name prepare_report.json | sort | xargs sha256sum ) > /tmp/b.sums
  if cmp -s /tmp/a.sums /tmp/b.sums; then s=true; else s=false; fi
  echo "{\"round\": $1, \"files\": $(wc -l < /tmp/a.sums), \"identical\": $s, \"sums_sha256\": \"$(sha256sum /tmp/a.sums | cut -c1-16)\"}" >> $OUT/$2-outputs.jsonl
}
order() { if [ $(($1 % 2)) = 1 ]; then echo "A B"; else echo "B A"; fi; }
for r in 1 2 3 4 5; do
  for t in $(order $r); do
    rm -rf /tmp/gcpause-$t-$r
    timed $t $r prepare python -m electra_tf.cli prepare --input $IN --output-dir /tmp/gcpause-$t-$r --vocab-file $V --quiet > /dev/null 2>&1
  done
  same $r prepare /tmp/gcpause-A-$r /tmp/gcpause-B-$r
done
for r in 1 2 3; do
  for t in $(order $r); do
    rm -rf /tmp/gcpause-w-$t-$r
    timed $t $r prepare-workers python -m electra_tf.cli prepare --input $IN --output-dir /tmp/gcpause-w-$t-$r --vocab-file $V --workers 2 --chunk-bytes 262144 --quiet > /dev/null 2>&1
  done
  same $r prepare-workers /tmp/gcpause-w-A-$r /tmp/gcpause-w-B-$r
done
for r in 1 2 3; do
  for t in $(order $r); do
    rm -rf /tmp/gcpause-p-$t-$r
    timed $t $r pretrain python -m electra_tf.cli pretrain --recipe tiny --data /tmp/gcpause-A-1 --output-dir /tmp/gcpause-p-$t-$r --steps 4 --verbose 0 > /dev/null 2>&1
    echo "{\"round\": $r, \"label\": \"$t\", \"last_run\": $(python -c "import json;d=json.load(open('/tmp/gcpause-p-$t-$r/last_run.json'));print(json.dumps({'step': d['step'], 'loss': d['logs']['loss']}))")}" >> $OUT/pretrain-outputs.jsonl
  done
done
for r in 1 2; do
  for t in $(order $r); do
    rm -f /tmp/gcpause-f-$t-$r.jsonl
    timed $t $r finetune python -m electra_tf.cli bench finetune --task reviews --impls electra_tf --rounds 1 --batches ours --data-dir ${DATA:-/tmp/avx2data} --out /tmp/gcpause-f-$t-$r.jsonl > /dev/null 2>&1
    grep '"finetune_bench"' /tmp/gcpause-f-$t-$r.jsonl | python -c "import json,sys; d=json.loads(sys.stdin.readline()); print(json.dumps({'round': $r, 'label': '$t', 'train_seconds': d['train_seconds'], 'wall_seconds': d['wall_seconds'], 'dev_accuracy': d['dev_accuracy']}))" >> $OUT/finetune-outputs.jsonl
  done
done
echo "$(date -u +%T) done" >> $OUT/when.log
