#!/bin/bash
# One-off record of the 2026-11-25 run: the paths are this machine's (the peers' benchmark in ../shared,
# a worktree of 97eb1d5 at /tmp/s27/before).
# 3 interleaved rounds: Model Garden graph, PyTorch gather:cdf, ours before (97eb1d5) and after.
export ONEDNN_MAX_CPU_ISA=AVX2 TF_ENABLE_ONEDNN_OPTS=1 ATEN_CPU_CAPABILITY=avx2 XLA_FLAGS=--xla_cpu_max_isa=AVX2
export PEER_VENV=/work/main/.venv ROUNDS=3 BATCHES=32 A_VARIANTS=graph B_VARIANTS=gather:cdf CEIL_THREADS=2 PEER_BUDGET_S=45
export OUT=/tmp/s27/peers
export EXTRA_CMD='cd /tmp/s27/before && /work/main/.venv/bin/python -m electra_tf.bench step --recipe small --batch $BATCH --round $ROUND --budget 45 | sed "s/^{/{\"label\": \"before\", /"; cd /work/main && /work/main/.venv/bin/python -m electra_tf.bench step --recipe small --batch $BATCH --round $ROUND --budget 45 | sed "s/^{/{\"label\": \"after\", /"'
bash /work/shared/bench/peers/run.sh
