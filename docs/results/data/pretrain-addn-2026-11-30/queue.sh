#!/bin/bash
# Decision 1 then 2 of RULE.md, one run at a time. Run from this folder.
export PATH=/work/main/.venv/bin:$PATH
H=$(dirname $(readlink -f $0)); cd /tmp/det || exit 1
date -u +"start %FT%TZ"
for n in c1 c2; do bash $H/../pretrain-determinism-2026-11-30/run_long.sh $n; done
# c3: stopped at 120, resumed by the same command to 150
sed 's/--max-steps 150/--max-steps $2/; s/^rm -rf \/tmp\/det\/\$1$/[ "$3" = keep ] || rm -rf \/tmp\/det\/$1/; s/> \/tmp\/det\/\$1.log/>> \/tmp\/det\/$1.log/' $H/../pretrain-determinism-2026-11-30/run_long.sh > /tmp/det/run_cut.sh
rm -f /tmp/det/c3.log; bash /tmp/det/run_cut.sh c3 120; bash /tmp/det/run_cut.sh c3 30 keep
for s in 100 150; do echo "== c1 vs c2 at step $s: $(/work/main/.venv/bin/python $H/../pretrain-determinism-2026-11-30/cmp.py c1/checkpoints/step-00000$s/ckpt c2/checkpoints/step-00000$s/ckpt 2>/dev/null | head -1)"; done
echo "== c1 vs c3 at step 150: $(/work/main/.venv/bin/python $H/../pretrain-determinism-2026-11-30/cmp.py c1/checkpoints/step-00000150/ckpt c3/checkpoints/step-00000150/ckpt 2>/dev/null | head -1)"
date -u +"decision 1 done %FT%TZ"
# decision 2: the replayed step, A (setting off) and B (on), alternated A B B A
cd /tmp/det3
for arm in A B B A; do
  if [ $arm = B ]; then export NOMEM=1; else unset NOMEM; fi
  REPS=41 bash $H/replay.sh t_${arm}_$RANDOM | grep -E "median|distinct" | sed "s/^/$arm /"
done
date -u +"end %FT%TZ"
