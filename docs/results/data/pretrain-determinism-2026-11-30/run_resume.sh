#!/bin/bash
# run.sh's run cut at step 6 (--max-steps 6), then resumed to step 12 by the same command.
D=/tmp/democlone2/data
rm -rf /tmp/det/$1
for extra in "--max-steps 6" ""; do
electra-tf pretrain --init $D/models/all-MiniLM-L6-v2 --data $D/adapt-domain-minilm-s64 \
  --output-dir /tmp/det/$1 --set train.num_steps=12 --set train.checkpoint_every=6 \
  --set train.batch_size=32 --set train.seed=1234 --set model.generator_size_fraction=0.25 \
  --set model.weight_tying=embeddings --set train.log_every=1 $extra >> /tmp/det/$1.log 2>&1
echo "$1 $extra rc=$?"
done
