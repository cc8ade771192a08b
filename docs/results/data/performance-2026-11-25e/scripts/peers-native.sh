#!/bin/bash
export TF_ENABLE_ONEDNN_OPTS=1
export PEER_VENV=/work/main/.venv ROUNDS=3 BATCHES=32 A_VARIANTS=graph B_VARIANTS=gather:cdf CEIL_THREADS=2 PEER_BUDGET_S=45
export OUT=/tmp/s29/peers-native
export EXTRA_CMD='cd /work/main && /work/main/.venv/bin/python -m electra_tf.bench step --recipe small --batch $BATCH --round $ROUND --budget 45 | sed "s/^{/{\"label\": \"282f12c\", /"'
bash /work/shared/bench/peers/run.sh
