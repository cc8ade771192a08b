#!/bin/bash
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
for i in 1 2 3 4; do
  timeout 900 python -X faulthandler /tmp/vg/suspect.py ${WHAT:-f32} 8 > /work/logs/seq/loop-${WHAT:-f32}-$i.log 2>&1
  echo "${WHAT:-f32} $i rc=$? rounds=$(grep -c '^round' /work/logs/seq/loop-${WHAT:-f32}-$i.log) $(date -u +%T)" >> /work/logs/seq/loop-status.log
done
