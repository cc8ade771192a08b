#!/bin/bash
# 5 rounds, A = /work/base (cda7a9c), B = /work/expA (cda7a9c + electra_tf.cli.command).
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/exit-freeze-2026-12-02
V=${V:-/tmp/avx2data/models/all-MiniLM-L6-v2/vocab.txt}
IN=${IN:-/tmp/avx2data/corpora/movieReviewSnippets_GroundTruth.txt}
for r in 1 2 3 4 5; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do
    tree=/work/base; [ $t = B ] && tree=/work/expA
    rm -rf /tmp/exitfreeze-$t-$r
    echo "$(date -u +%T) round $r $t start" >> $OUT/when.log
    PYTHONPATH=$tree /usr/bin/time -f "{\"round\": $r, \"label\": \"$t\", \"wall_s\": %e, \"user_s\": %U, \"sys_s\": %S}" -a -o $OUT/times.jsonl \
      python -m electra_tf.cli prepare --input $IN --output-dir /tmp/exitfreeze-$t-$r --vocab-file $V --quiet > /dev/null 2>&1
  done
  ( cd /tmp/exitfreeze-A-$r && find . -type f ! -name prepare_report.json | sort | xargs sha256sum ) > /tmp/a.sums
  ( cd /tmp/exitfreeze-B-$r && find . -type f ! -name prepare_report.json | sort | xargs sha256sum ) > /tmp/b.sums
  if cmp -s /tmp/a.sums /tmp/b.sums; then same=true; else same=false; fi
  echo "{\"round\": $r, \"files\": $(wc -l < /tmp/a.sums), \"identical\": $same, \"sums_sha256\": \"$(sha256sum /tmp/a.sums | cut -c1-16)\"}" >> $OUT/outputs.jsonl
done
echo "$(date -u +%T) done" >> $OUT/when.log
