#!/bin/bash
# A TensorFlow run under `mirrored` (2 logical CPU devices) resumed on one JAX device,
# against the same resume under `mirrored` on TensorFlow. From /tmp/mir, with the clone's
# venv at /work/main/.venv (edit the paths in mk.py and cmp.py for another clone).
set -e
export TF_CPP_MIN_LOG_LEVEL=3
E=/work/main/.venv/bin/electra-tf
rm -rf /tmp/mir/data /tmp/mir/m2 /tmp/mir/m2jax /tmp/mir/m2tf
/work/main/.venv/bin/python mk.py
S="--set model.num_layers=1 --set model.hidden_dim=8 --set model.embedding_dim=8 --set model.num_heads=2 --set model.intermediate_dim=16 --set model.max_sequence_length=16 --set data.sequence_length=16 --set model.dropout=0.0 --set train.warmup_steps=0 --set train.learning_rate=1e-3 --set train.checkpoint_every=2"
A="pretrain --recipe tiny --data /tmp/mir/data --batch-size 4 --verbose 0"
$E $A --output-dir /tmp/mir/m2 $S --set train.num_steps=2 --strategy mirrored --cpu-devices 2
cp -r m2 m2jax; cp -r m2 m2tf
$E $A --output-dir /tmp/mir/m2tf $S --set train.num_steps=4 --strategy mirrored --cpu-devices 2
KERAS_BACKEND=jax $E $A --output-dir /tmp/mir/m2jax $S --set train.num_steps=4 --backend jax
/work/main/.venv/bin/python cmp.py | tail -1 > result.json
