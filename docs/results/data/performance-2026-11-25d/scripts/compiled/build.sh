#!/bin/bash
# Builds the two prototype ops into /tmp/s28/op, where gelu_py.py, abop.py and abop2.py load them from.
set -e
mkdir -p /tmp/s28/op && cp "$(dirname "$0")"/*.cc "$(dirname "$0")"/gelu_py.py /tmp/s28/op/
FLAGS=$(.venv/bin/python -c "import tensorflow as tf; print(' '.join(tf.sysconfig.get_compile_flags() + tf.sysconfig.get_link_flags()))")
for op in gelu_op dropout_op; do
  g++ -std=c++17 -shared -fPIC -O3 -mavx2 -mfma -w /tmp/s28/op/$op.cc -o /tmp/s28/op/$op.so $FLAGS
done
