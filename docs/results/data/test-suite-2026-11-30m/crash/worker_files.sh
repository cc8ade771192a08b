#!/bin/bash
# The crashed worker's files (from its core's tmp paths), in one process, under the checking allocator, repeated.
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 PYTHONPATH=/tmp/vg
for i in 1 2 3; do
  rm -f /tmp/vg/trim-main.log
  timeout 1500 python -m pytest -p no:cacheprovider -p trimplugin -q tests/pretraining/test_backends.py tests/pretraining/test_portable_init.py tests/pretraining/test_torch_run.py tests/pretraining/test_resume.py tests/pretraining/test_jax_run.py tests/finetuning/test_keras_api.py > /work/logs/seq/run$i.log 2>&1
  echo "run $i rc=$? $(date -u +%T)" >> /work/logs/seq/status.log
  cp /tmp/vg/trim-main.log /work/logs/seq/trim$i.log
done
