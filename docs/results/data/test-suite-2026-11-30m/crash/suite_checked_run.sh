#!/bin/bash
# The README's test command under glibc's checking allocator, every arena consolidated after each test.
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export GLIBC_TUNABLES=glibc.malloc.check=3 LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 PYTHONPATH=/tmp/vg
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite46/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider -p trimplugin --junitxml=/work/logs/suite46/junit.xml > /work/logs/suite46/pytest.log 2> /work/logs/suite46/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite46/when.log
