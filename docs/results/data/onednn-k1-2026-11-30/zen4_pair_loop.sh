#!/bin/bash
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
for i in 1 2 3 4 5 6 7 8; do
  timeout 900 python -X faulthandler -m pytest -p no:cacheprovider -q tests/pretraining/test_portable_init.py tests/finetuning/test_keras_api.py > /work/logs/seq/base-pairloop-$i.log 2>&1
  rc=$?
  echo "pair $i rc=$rc $(date -u +%T)" >> /work/logs/seq/base-pairloop-status.log
  [ $rc -ne 0 ] && break
done
