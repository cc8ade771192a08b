#!/bin/bash
cd /work/main && . .venv/bin/activate && ulimit -c 0
export GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 PYTHONPATH=/tmp/vg
K=tests/finetuning/test_keras_api.py
for i in 1 2 3; do
  for f in tests/pretraining/test_resume.py tests/pretraining/test_torch_run.py tests/pretraining/test_portable_init.py tests/pretraining/test_backends.py; do
    name=$(basename $f .py)
    timeout 900 python -m pytest -p no:cacheprovider -q $f $K > /work/logs/seq/sub-$name-$i.log 2>&1
    echo "$name $i rc=$? $(date -u +%T)" >> /work/logs/seq/sub-status.log
  done
done
