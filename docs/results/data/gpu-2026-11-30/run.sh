#!/usr/bin/env bash
# The device call (one NVIDIA GPU, about 7 minutes at most), from the working tree's root, with
# gpu-carry/ carried (made here by ../gpu-2026-11-28/pack.sh; BATCHES= the Penn Treebank batches).
# Writes $OUT/device.jsonl, $OUT/log.txt and the short run's weights.
set -uo pipefail
export PYTHONUNBUFFERED=1
site=/tmp/carry-site
python3 gpu-carry/bootstrap.py gpu-carry/wheels "$site"
export PYTHONPATH="$site:$PWD" KERAS_BACKEND=jax XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
special=$(python3 -c "import json; m = json.load(open('gpu-carry/manifest.json'));
print(' '.join(f'--set data.{k}_id={v}' for k, v in m['special_ids'].items()))")
# ELECTRA-Small steps at 128 tokens, ours (JAX, jitted) beside Hugging Face PyTorch ELECTRA on
# the same ids: exact float32 products on both, TF32 products on both, bfloat16 on both.
timeout 300 python3 -m electra_tf.bench.device --out "$OUT" --device cuda --recipe small \
  --batch-sizes 32,128 --precisions float32,tf32,mixed_bfloat16 --rounds 1 --warmup 5 \
  --steps 50 || echo "step bench ended with $?"
# A short pre-training run on carried batches; its weights come back and load on TensorFlow here.
timeout 120 python3 -m electra_tf.bench.device --out "$OUT" --device cuda --recipe small \
  --rounds 0 --batches gpu-carry/batches.npz --train-steps 150 --train-batch 32 \
  --set model.vocabulary_size=4000 --set model.max_sequence_length=64 $special \
  || echo "short run ended with $?"
# One file comes back at most 16 MiB: the weights (about 40 MB) travel in 15 MiB parts
# (`cat pretrainer.weights.h5.part-* > pretrainer.weights.h5` here).
if [ -f "$OUT/pretrainer.weights.h5" ]; then
  sha256sum "$OUT/pretrainer.weights.h5" | tee "$OUT/weights.sha256"
  split -b 15M "$OUT/pretrainer.weights.h5" "$OUT/pretrainer.weights.h5.part-"
  rm "$OUT/pretrainer.weights.h5"
fi
ls -la "$OUT"
