#!/bin/bash
# Process census: every Python process of the suite logs its wall, CPU and imports at exit.
# Installed as site-packages/zz_proclog.py with a one-line zz_proclog.pth ("import zz_proclog"), so every Python process of the venv runs it (proclog.py here).
cd /work/base && . /work/main/.venv/bin/activate && export PYTHONPATH=/work/base PROCLOG=/work/logs/suite70/procs.tsv
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite70/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider --junitxml=/work/logs/suite70/junit.xml > /work/logs/suite70/pytest.log 2> /work/logs/suite70/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite70/when.log
