#!/bin/bash
# The README's command alone, with per-test CPU (cpuplugin.py from data/test-suite-2026-12-01f/).
cd /work/base && . /work/main/.venv/bin/activate && export PYTHONPATH=/work/base:/work/logs/suite91 CPULOG=/work/logs/suite91/cpu.tsv GCLOG=/work/logs/suite91/gc.tsv
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite91/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider -p cpuplugin -p gcplug --junitxml=/work/logs/suite91/junit.xml > /work/logs/suite91/pytest.log 2> /work/logs/suite91/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite91/when.log
