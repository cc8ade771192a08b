#!/bin/bash
# the demo's pre-training (300-step schedule), stopped at $2 steps, a digest of every variable per step; $1 = name
D=/tmp/democlone2/data
rm -rf /tmp/det2/$1
DIGESTS=/tmp/det2/$1.digests.jsonl /work/main/.venv/bin/python $(dirname $(readlink -f $0))/digest_run.py pretrain --init $D/models/all-MiniLM-L6-v2 --data $D/adapt-domain-minilm-s64 \
  --output-dir /tmp/det2/$1 --set train.num_steps=300 --set train.checkpoint_every=50 \
  --set train.batch_size=32 --set train.seed=1234 --set model.generator_size_fraction=0.25 \
  --set model.weight_tying=embeddings --set train.log_every=1 --set train.keep_checkpoints=5 \
  --max-steps $2 > /tmp/det2/$1.log 2>&1
echo "$1 rc=$?"
