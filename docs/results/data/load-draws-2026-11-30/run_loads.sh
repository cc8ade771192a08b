#!/bin/bash
# RULE.md step 1: before (worktree at 4e9fcec) and after (main), alternated, 3 each.
HF=/tmp/democlone/data/models/all-MiniLM-L6-v2; CK=/tmp/det/a1/checkpoints/step-00000012; FT=/tmp/ftdet/c
OUT=${OUT:-/tmp/skip/loads.jsonl}
for r in 1 2 3; do
  PYTHONPATH=/tmp/old-skip python /tmp/skip/time_load.py before $HF $CK $FT 2>/dev/null | grep '^{' >> $OUT
  python /tmp/skip/time_load.py after $HF $CK $FT 2>/dev/null | grep '^{' >> $OUT
done
