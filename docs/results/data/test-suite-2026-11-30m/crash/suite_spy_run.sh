#!/bin/bash
# The README's test command with a spy plugin logging broadcast BatchMatMuls and einsum forms.
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
export PYTHONPATH=/tmp/vg
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite45/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider -p spyplugin --junitxml=/work/logs/suite45/junit.xml > /work/logs/suite45/pytest.log 2> /work/logs/suite45/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite45/when.log
