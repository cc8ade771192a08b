#!/bin/bash
# 5 rounds, A = /work/base (7b4d6f1), B = /work/expA (7b4d6f1 + the split_words change).
cd /tmp && . /work/main/.venv/bin/activate
OUT=/work/main/docs/results/data/tokenizer-ops-2026-12-02
P=$OUT/probe.py
for r in 1 2 3 4 5; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for t in $order; do
    tree=/work/base; [ $t = B ] && tree=/work/expA
    echo "$(date -u +%T) round $r $t start" >> $OUT/when.log
    PYTHONPATH=$tree python $P $t /tmp/tokops-$t 2>/dev/null | grep '^{' | sed "s/^{/{\"round\": $r, /" >> $OUT/results.jsonl
  done
done
echo "$(date -u +%T) done" >> $OUT/when.log
