#!/bin/bash
# The demo's pre-training (300-step schedule, seed 1234, MiniLM, generator 1/4, tied
# embeddings, 32 x 64) stopped at step 150 (--max-steps), a checkpoint every 50; $1 = name
D=/tmp/democlone2/data
rm -rf /tmp/det/$1
electra-tf pretrain --init $D/models/all-MiniLM-L6-v2 --data $D/adapt-domain-minilm-s64 \
  --output-dir /tmp/det/$1 --set train.num_steps=300 --set train.checkpoint_every=50 \
  --set train.batch_size=32 --set train.seed=1234 --set model.generator_size_fraction=0.25 \
  --set model.weight_tying=embeddings --set train.log_every=1 --set train.keep_checkpoints=5 \
  --max-steps 150 > /tmp/det/$1.log 2>&1
echo "$1 rc=$?"
