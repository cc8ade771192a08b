#!/bin/bash
# The README's command alone under py-spy (25 Hz, every process of the run, raw stacks).
cd /work/base && . /work/main/.venv/bin/activate && export PYTHONPATH=/work/base
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite74/when.log
/usr/bin/time -v py-spy record --subprocesses --rate 25 --format raw --nonblocking -o /work/logs/suite74/stacks.txt -- pytest -n 2 --dist loadfile -p no:cacheprovider --junitxml=/work/logs/suite74/junit.xml > /work/logs/suite74/pytest.log 2> /work/logs/suite74/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite74/when.log
