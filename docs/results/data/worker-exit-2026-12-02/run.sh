#!/bin/bash
# A = /work/base (e24fd70), B = /work/expA (e24fd70 + the worker's freeze).
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/worker-exit-2026-12-02
V=${V:-/tmp/avx2data/models/all-MiniLM-L6-v2/vocab.txt}
IN=${IN:-/tmp/avx2data/corpora/movieReviewSnippets_GroundTruth.txt}
for r in 1 2 3 4 5; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do
    tree=/work/base; [ $t = B ] && tree=/work/expA
    rm -rf /tmp/workerexit-$t-$r
    echo "$(date -u +%T) round $r $t start" >> $OUT/when.log
    PYTHONPATH=$tree /usr/bin/time -f "{\"round\": $r, \"label\": \"$t\", \"wall_s\": %e, \"user_s\": %U, \"sys_s\": %S}" -a -o $OUT/times.jsonl \
      python -m electra_tf.cli prepare --input $IN --output-dir /tmp/workerexit-$t-$r --vocab-file $V --workers 2 --chunk-bytes 262144 --quiet > /dev/null 2>&1
  done
  ( cd /tmp/workerexit-A-$r && find . -type f ! -name prepare_report.json | sort | xargs sha256sum ) > /tmp/wa.sums
  ( cd /tmp/workerexit-B-$r && find . -type f ! -name prepare_report.json | sort | xargs sha256sum ) > /tmp/wb.sums
  if cmp -s /tmp/wa.sums /tmp/wb.sums; then same=true; else same=false; fi
  echo "{\"round\": $r, \"files\": $(wc -l < /tmp/wa.sums), \"identical\": $same, \"sums_sha256\": \"$(sha256sum /tmp/wa.sums | cut -c1-16)\"}" >> $OUT/outputs.jsonl
done
echo "$(date -u +%T) done" >> $OUT/when.log
