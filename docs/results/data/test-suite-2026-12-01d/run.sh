#!/bin/bash
# The README's test command, alone, with timing and junit (test-suite.md's protocol).
cd /work/main && . .venv/bin/activate && ulimit -c unlimited
echo "$(date -u +%FT%TZ) start $(git rev-parse --short HEAD)" > /work/logs/suite69/when.log
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider --junitxml=/work/logs/suite69/junit.xml > /work/logs/suite69/pytest.log 2> /work/logs/suite69/time.log
echo "$(date -u +%FT%TZ) end $?" >> /work/logs/suite69/when.log
