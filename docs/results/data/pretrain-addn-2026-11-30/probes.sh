#!/bin/bash
# Not deciding (RULE.md): 12-step pairs with the change, TensorFlow's default two inter-op
# threads (p1 p2) and mirrored on 2 logical CPUs (m1 m2); cmp.py (../pretrain-determinism-2026-11-30/) at step 12
export PATH=/work/main/.venv/bin:$PATH
H=$(dirname $(readlink -f $0)); cd /tmp/det || exit 1
for n in p1 p2; do TF_NUM_INTEROP_THREADS=2 bash /work/main/docs/results/data/pretrain-determinism-2026-11-30/run.sh $n; done
for n in m1 m2; do bash /work/main/docs/results/data/pretrain-determinism-2026-11-30/run_mirrored.sh $n; done
echo "== p1 vs p2 (2 inter-op threads): $(python $H/../pretrain-determinism-2026-11-30/cmp.py p1/checkpoints/step-00000012/ckpt p2/checkpoints/step-00000012/ckpt 2>/dev/null)"
echo "== m1 vs m2 (mirrored, 2 CPUs): $(python $H/../pretrain-determinism-2026-11-30/cmp.py m1/checkpoints/step-00000012/ckpt m2/checkpoints/step-00000012/ckpt 2>/dev/null)"
