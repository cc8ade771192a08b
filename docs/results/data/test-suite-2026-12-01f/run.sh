#!/bin/bash
# Per-test CPU census (self and waited-for children) at the README's command.
cd /work/base && . /work/main/.venv/bin/activate && export PYTHONPATH=/work/base:/work/logs/suite71 CPULOG=/work/logs/suite71/cpu.tsv
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite71/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider -p cpuplugin --junitxml=/work/logs/suite71/junit.xml > /work/logs/suite71/pytest.log 2> /work/logs/suite71/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite71/when.log
