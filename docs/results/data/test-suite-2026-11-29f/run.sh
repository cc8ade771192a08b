#!/bin/bash
cd /work/main && . .venv/bin/activate
/usr/bin/time -v pytest -n 2 --dist loadfile -p no:cacheprovider --junitxml=/work/logs/suite1/junit.xml -q > /work/logs/suite1/out.log 2> /work/logs/suite1/time.log
echo "rc $?" >> /work/logs/suite1/out.log
