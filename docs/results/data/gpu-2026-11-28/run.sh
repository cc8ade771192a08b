#!/usr/bin/env bash
# The device call (one NVIDIA GPU, under 10 minutes), from the working tree's root, with
# gpu-carry/ carried (made by pack.sh here). Writes $OUT/device.jsonl and the short run's weights.
set -euo pipefail
site=/tmp/carry-site
python3 gpu-carry/bootstrap.py gpu-carry/wheels "$site"
export PYTHONPATH="$site:$PWD" KERAS_BACKEND=jax XLA_PYTHON_CLIENT_PREALLOCATE=false
special=$(python3 -c "import json; m = json.load(open('gpu-carry/manifest.json'));
print(' '.join(f'--set data.{k}_id={v}' for k, v in m['special_ids'].items()))")
# ELECTRA-Small steps, ours (JAX, jitted) beside the PyTorch peer, fp32 and bf16, batch 32 and 128.
timeout 420 python3 -m electra_tf.bench.device --out "$OUT" --device cuda --recipe small \
  --batch-sizes 32,128 --precisions float32,mixed_bfloat16 --rounds 1 --warmup 3 --steps 20 || true
# A short pre-training run on carried batches; its weights come back and load on TensorFlow here.
timeout 150 python3 -m electra_tf.bench.device --out "$OUT" --device cuda --recipe small \
  --rounds 0 --batches gpu-carry/batches.npz --train-steps 150 --train-batch 32 \
  --set model.vocabulary_size=4000 --set model.max_sequence_length=64 $special
