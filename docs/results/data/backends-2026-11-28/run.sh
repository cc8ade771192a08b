#!/usr/bin/env bash
# Reproduce docs/results/backends.md from a checkout's root, in its virtual environment.
set -euo pipefail
here=docs/results/data/backends-2026-11-28
# Equality across backends (writes the children's npz files in pytest's tmp folder; the
# test asserts the bounds). For the JSON: run the child by hand and compare.
pytest -q tests/pretraining/test_backends.py
tmp=$(mktemp -d)
for b in tensorflow jax torch; do
  XLA_FLAGS=--xla_force_host_platform_device_count=2 KERAS_BACKEND=$b PYTHONPATH=. \
    python tests/pretraining/backend_child.py "$tmp/w.weights.h5" "$tmp/$b.npz" inverse_cdf
done
python $here/equality.py "$tmp/tensorflow.npz" "$tmp/jax.npz" "$tmp/torch.npz" > $here/equality.jsonl
# Every other objective across backends (the test asserts the bounds; then the JSON from
# the children's npz files in pytest's tmp folder, objectives0).
pytest -q tests/pretraining/test_backends_objectives.py
python $here/objectives_equality.py "$(ls -d /tmp/pytest-of-$USER/pytest-current/objectives0)" \
  > $here/objectives_equality.jsonl
# The TensorFlow step's graph before and after (BASE: a checkout of c6ec2e1).
(cd "$BASE" && PYTHONPATH=. python "$OLDPWD/$here/graph_ops.py" before) > $here/graph_ops.jsonl
PYTHONPATH=. python $here/graph_ops.py after >> $here/graph_ops.jsonl
# The same for the six other objectives (BASE2: a checkout of main at 01063f0).
(cd "$BASE2" && PYTHONPATH=. python "$OLDPWD/$here/graph_ops_objectives.py" before) \
  > $here/graph_ops_objectives.jsonl
PYTHONPATH=. python $here/graph_ops_objectives.py after >> $here/graph_ops_objectives.jsonl
# Step speed, 3 interleaved rounds.
for round in 1 2 3; do
  for b in tensorflow jax torch; do
    KERAS_BACKEND=$b PYTHONPATH=. python $here/step_speed.py | sed "s/^{/{\"round\": $round, /"
  done
done > $here/step_speed.jsonl
