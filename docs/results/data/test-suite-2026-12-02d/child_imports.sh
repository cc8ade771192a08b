#!/bin/bash
# 3 rounds x {jax, torch} x {plain python SCRIPT, python tests/child_entry.py SCRIPT}, alternating order.
cd /tmp && . /work/main/.venv/bin/activate
HERE=/work/main/docs/results/data/test-suite-2026-12-02d
for r in 1 2 3; do
  for b in jax torch; do
    if [ $((r % 2)) = 1 ]; then order="plain entry"; else order="entry plain"; fi
    for how in $order; do
      if [ $how = entry ]; then cmd="python /work/main/tests/child_entry.py $HERE/child_imports.py"; else cmd="python $HERE/child_imports.py"; fi
      line=$(KERAS_BACKEND=$b $cmd 2>/dev/null | tail -1)
      echo "{\"round\": $r, \"backend\": \"$b\", \"start\": \"$how\", \"line\": \"$line\"}" >> $HERE/child_imports.jsonl
    done
  done
done
