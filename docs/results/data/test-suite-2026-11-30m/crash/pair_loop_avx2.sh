#!/bin/bash
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export ONEDNN_MAX_CPU_ISA=AVX2 GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
for i in 1 2 3 4 5 6 7 8 9; do
  timeout 900 python -X faulthandler -m pytest -p no:cacheprovider -q tests/pretraining/test_portable_init.py tests/finetuning/test_keras_api.py -k "not mixed_float16" > /work/logs/seq/pairloop-avx2-$i.log 2>&1
  rc=$?
  echo "pair $i rc=$rc $(date -u +%T)" >> /work/logs/seq/pairloop-avx2-status.log
  [ $rc -ne 0 ] && break
done
