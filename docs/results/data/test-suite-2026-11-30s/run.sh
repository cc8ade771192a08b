#!/bin/bash
# The README's test command, alone, with AVX-512 switched off where a library lets it be:
# oneDNN (TensorFlow) and PyTorch's kernels held to AVX2, XLA in this process too (children
# that set their own XLA_FLAGS are not held). A proxy for an AVX2 CPU, not one.
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 XLA_FLAGS=--xla_cpu_max_isa=AVX2
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite53/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider --junitxml=/work/logs/suite53/junit.xml > /work/logs/suite53/pytest.log 2> /work/logs/suite53/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite53/when.log
