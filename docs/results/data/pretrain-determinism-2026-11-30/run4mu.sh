#!/bin/bash
# Two identical short continued pre-training runs of the demo's setting; $1 = name, rest = env
D=/tmp/democlone2/data
rm -rf /tmp/det/$1
electra-tf pretrain --init $D/models/all-MiniLM-L6-v2 --data $D/adapt-domain-minilm-s64 \
  --output-dir /tmp/det/$1 --set train.num_steps=4 --set train.checkpoint_every=1 --set train.keep_checkpoints=10 \
  --set train.batch_size=32 --set train.seed=1234 --set model.generator_size_fraction=0.25 \
  --set model.weight_tying=none --set train.log_every=1 --set train.strategy=mirrored --set train.cpu_devices=2 > /tmp/det/$1.log 2>&1
echo "$1 rc=$?"
