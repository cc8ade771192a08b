#!/usr/bin/env bash
# Run here (a checkout's root, its virtual environment active): builds gpu-carry/, the folder the
# device call carries (`run`'s carry=["gpu-carry"]; gpu-carry/ is git-ignored), under 64 MiB.
# The GPU machine has Python 3.12, JAX (CUDA), PyTorch, transformers and numpy, no TensorFlow
# and no package index: everything else our JAX step imports travels here as wheels, and
# bootstrap.py there unpacks only the ones that machine lacks.
set -euo pipefail
here=docs/results/data/gpu-2026-11-28
carry=gpu-carry
rm -rf "$carry" && mkdir -p "$carry/wheels"
pip wheel -q --no-deps -w "$carry/wheels" .
pure="keras==3.15.1 keras-hub==0.32.0 namex absl-py rich markdown-it-py mdurl pygments
      kagglehub kagglesdk protobuf requests urllib3 idna certifi tqdm packaging"
pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$carry/wheels" \
  $pure optree h5py ml-dtypes regex pyyaml charset-normalizer
# The short run's batches: the Penn Treebank batches of the learning comparison (see
# docs/results/backends.md), 64 tokens, vocabulary 4,000.
cp "${BATCHES:-/work/data/learn/batches/train.npz}" "$carry/batches.npz"
cp "${BATCHES_MANIFEST:-/work/data/learn/batches/manifest.json}" "$carry/manifest.json"
cp "$here/bootstrap.py" "${RUN_SH:-$here/run.sh}" "$carry/"
du -sh "$carry" && du -s --block-size=1M "$carry" | awk '$1 >= 64 {print "over 64 MiB"; exit 1}'
