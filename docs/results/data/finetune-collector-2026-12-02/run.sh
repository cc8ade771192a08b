#!/bin/bash
# One round of `bench finetune --task reviews` (ours, then the PyTorch peer, our batches) with
# sitecustomize.py on PYTHONPATH: each process sums its collector's time (gc.callbacks) and
# writes it at exit to /tmp/gcsite/log. DATA: the download cache (absolute). From /tmp.
mkdir -p /tmp/gcsite && rm -f /tmp/gcsite/log
PYTHONPATH="$(cd "$(dirname "$0")" && pwd)" electra-tf bench finetune --task reviews \
  --impls electra_tf,pytorch --rounds 1 --batches ours --data-dir "${DATA:?}" --out reviews.jsonl
cp /tmp/gcsite/log collector.log
