#!/bin/bash
# After the mend (the pause ends with the import statement that loaded the frameworks):
# the rule's commands again, reported: A = /work/base, B = /work/expA (their commits are in each record).
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/startup-collector-2026-12-02
V=/tmp/avx2data/models/all-MiniLM-L6-v2/vocab.txt; IN=/tmp/avx2data/corpora/movieReviewSnippets_GroundTruth.txt
timed() {
  local t=$1 r=$2 f=$3; shift 3
  local tree=/work/base; [ $t = B ] && tree=/work/expA
  echo "$(date -u +%T) recheck $f round $r $t start ($(git -C $tree rev-parse --short HEAD))" >> $OUT/when.log
  PYTHONPATH=$tree /usr/bin/time -f "{\"round\": $r, \"label\": \"$t\", \"rev\": \"$(git -C $tree rev-parse --short HEAD)\", \"wall_s\": %e, \"user_s\": %U, \"sys_s\": %S, \"max_rss_kb\": %M}" -a -o $OUT/recheck-$f.jsonl "$@"
}
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do rm -rf /tmp/gcr-$t-$r; timed $t $r prepare python -m electra_tf.cli prepare --input $IN --output-dir /tmp/gcr-$t-$r --vocab-file $V --quiet > /dev/null 2>&1; done
  a=$( cd /tmp/gcr-A-$r && find . -type f ! -name prepare_report.json | sort | xargs sha256sum | sha256sum | cut -c1-16 )
  b=$( cd /tmp/gcr-B-$r && find . -type f ! -name prepare_report.json | sort | xargs sha256sum | sha256sum | cut -c1-16 )
  echo "{\"round\": $r, \"A\": \"$a\", \"B\": \"$b\", \"identical\": $([ $a = $b ] && echo true || echo false)}" >> $OUT/recheck-prepare-outputs.jsonl
done
for r in 1 2; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do
    timed $t $r finetune python -m electra_tf.cli bench finetune --task reviews --impls electra_tf --rounds 1 --batches ours --data-dir /tmp/avx2data --out /tmp/gcr-f-$t-$r.jsonl > /dev/null 2>&1
  done
done
echo "$(date -u +%T) recheck done" >> $OUT/when.log
