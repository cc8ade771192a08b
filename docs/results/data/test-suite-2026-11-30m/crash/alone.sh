#!/bin/bash
cd /work/main && . .venv/bin/activate && ulimit -c 0
export GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 PYTHONPATH=/tmp/vg
for i in $(seq 1 ${N:-6}); do
  timeout 900 python -m pytest -p no:cacheprovider -q "$@" > /work/logs/seq/alone-$i.log 2>&1
  echo "alone $i rc=$? $(date -u +%T) $*" >> /work/logs/seq/alone-status.log
done
