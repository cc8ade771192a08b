#!/bin/bash
# One bfloat16 product in TensorFlow, with oneDNN as it is, held to AVX2, and held to AVX-512.
for cap in "" AVX2 AVX512_CORE; do
  ONEDNN_MAX_CPU_ISA=$cap TF_CPP_MIN_LOG_LEVEL=3 timeout 120 python -c \
    "import tensorflow as tf; a = tf.ones([4, 4], tf.bfloat16); print(float(tf.reduce_sum(tf.matmul(a, a))))" > /dev/null 2>&1
  echo "ONEDNN_MAX_CPU_ISA=$cap exit $?"
done
