#!/bin/bash
D=/tmp/democlone2/data
rm -rf /tmp/det3/$1; export OUTJ=/tmp/det3/$1.json
/work/main/.venv/bin/python $(dirname $(readlink -f $0))/replay.py pretrain --init $D/models/all-MiniLM-L6-v2 --data $D/adapt-domain-minilm-s64 \
  --output-dir /tmp/det3/$1 --set train.num_steps=300 --set train.checkpoint_every=50 \
  --set train.batch_size=32 --set train.seed=1234 --set model.generator_size_fraction=0.25 \
  --set model.weight_tying=embeddings --set train.log_every=1 --max-steps 5 > /tmp/det3/$1.log 2>&1
echo "$1 rc=$?"; grep -E "distinct|variant|median|Error|memory opt" /tmp/det3/$1.log
