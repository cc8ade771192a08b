#!/bin/bash
# RULE2.md, one run at a time. Run from this folder.
export PATH=/work/main/.venv/bin:$PATH
H=$(dirname $(readlink -f $0)); cd /tmp/det || exit 1
date -u +"start %FT%TZ"
for n in e1 e2; do TF_NUM_INTEROP_THREADS=2 bash $H/../pretrain-determinism-2026-11-30/run_long.sh $n; done
for s in 100 150; do echo "== e1 vs e2 at step $s: $(python $H/../pretrain-determinism-2026-11-30/cmp.py e1/checkpoints/step-00000$s/ckpt e2/checkpoints/step-00000$s/ckpt 2>/dev/null | head -1)"; done
date -u +"decision 1 done %FT%TZ"
cd /tmp/det3; export NOMEM=1
for arm in A2 B2 B2 A2; do
  if [ $arm = B2 ]; then export TF_NUM_INTEROP_THREADS=2; else export TF_NUM_INTEROP_THREADS=1; fi
  REPS=41 bash $H/replay.sh t_${arm}_$RANDOM | grep -E "median|distinct" | sed "s/^/$arm /"
done
date -u +"end %FT%TZ"
