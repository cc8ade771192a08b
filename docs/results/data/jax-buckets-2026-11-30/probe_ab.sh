#!/bin/bash
. /work/main/.venv/bin/activate
export PROBE_DATA=/tmp/democlone/data KERAS_BACKEND=jax
cd /tmp
for round in 1 2; do
  echo "{\"arm\": \"buckets\", \"round\": $round, \"r\": $(PYTHONPATH=/work/main python /tmp/speed_probe.py 2 longest 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
  echo "{\"arm\": \"before\", \"round\": $round, \"r\": $(PYTHONPATH=/work/wt-before python /tmp/speed_probe.py 2 longest 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
done
