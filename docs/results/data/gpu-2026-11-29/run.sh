#!/usr/bin/env bash
# The device call (one NVIDIA GPU, under 10 minutes), from the working tree's root, with
# gpu-carry/ carried (made here by ../gpu-2026-11-28/pack.sh; BATCHES= the Penn Treebank batches).
# Writes $OUT/device.jsonl and the short run's discriminator weights. A dry run here (CPU):
#   OUT=/tmp/dry DEVICE=cpu BATCH_SIZES=4 STEPS=2 TRAIN_STEPS=3 bash gpu-carry/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
site=/tmp/carry-site
python3 gpu-carry/bootstrap.py gpu-carry/wheels "$site"
# PYTHONSAFEPATH: `python -m` must not put the working tree first, whose electra_tf has no
# recipes/ (the wheel's has): the first call of 2026-11-29 failed on exactly that.
export PYTHONPATH="$site" PYTHONSAFEPATH=1 KERAS_BACKEND=jax XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
special=$(python3 -c "import json; m = json.load(open('gpu-carry/manifest.json'));
print(' '.join(f'--set data.{k}_id={v}' for k, v in m['special_ids'].items()))")
# ELECTRA-Small steps at 128 tokens, ours (JAX, jitted) beside Hugging Face PyTorch ELECTRA on
# the same ids. Each JAX configuration compiled for 60-130 s on the H200 of 2026-11-29: two fit.
timeout 280 python3 -m electra_tf.bench.device --out "$OUT" --device ${DEVICE:-cuda} --recipe small \
  --batch-sizes ${BATCH_SIZES:-128} --precisions ${PRECISIONS:-mixed_bfloat16,float32} \
  --rounds 1 --warmup 5 --steps ${STEPS:-50} || echo "step bench ended with $?"
# A short pre-training run on carried batches; its weights come back and load on TensorFlow here.
# Twice: the second reads the first's compiled step from JAX's cache (its `seconds` say how much
# of the first's was compiling); both write the same weights.
for start in cold warm; do
  timeout 140 python3 -m electra_tf.bench.device --out "$OUT" --device ${DEVICE:-cuda} \
    --recipe small --rounds 0 --batches gpu-carry/batches.npz \
    --train-steps ${TRAIN_STEPS:-150} --train-batch 32 --set model.vocabulary_size=4000 \
    --set model.max_sequence_length=64 $special || echo "short run ($start) ended with $?"
done
# At most 8 files of 16 MiB and 64 MiB in all come back: the pretrainer's weights with Adam's
# moments (130 MB) stay there; the discriminator's (41 MB) travel in 15 MiB parts
# (`cat discriminator.weights.h5.part-* > discriminator.weights.h5` here).
rm -f "$OUT/pretrainer.weights.h5"
if [ -f "$OUT/discriminator.weights.h5" ]; then
  sha256sum "$OUT/discriminator.weights.h5"
  split -b 15M "$OUT/discriminator.weights.h5" "$OUT/discriminator.weights.h5.part-"
  rm "$OUT/discriminator.weights.h5"
fi
ls -la "$OUT"
