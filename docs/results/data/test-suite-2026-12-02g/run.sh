#!/bin/bash
# The README's command alone, with per-test CPU (cpuplugin.py from data/test-suite-2026-12-01f/).
cd /work/base && . /work/main/.venv/bin/activate && export PYTHONPATH=/work/base:/work/logs/suite90 CPULOG=/work/logs/suite90/cpu.tsv
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite90/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider -p cpuplugin --junitxml=/work/logs/suite90/junit.xml > /work/logs/suite90/pytest.log 2> /work/logs/suite90/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite90/when.log
