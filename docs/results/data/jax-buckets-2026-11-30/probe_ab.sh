#!/bin/bash
# Run as recorded with a copy of the probe in /tmp; the probe now reads its data folder from PROBE_DATA.
PROBE=$(cd "$(dirname "$0")" && pwd)/../task-backends-2026-11-30/speed_probe.py
. /work/main/.venv/bin/activate
export PROBE_DATA=/tmp/democlone/data KERAS_BACKEND=jax
cd /tmp
for round in 1 2; do
  echo "{\"arm\": \"buckets\", \"round\": $round, \"r\": $(PYTHONPATH=/work/main python "$PROBE" 2 longest 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
  echo "{\"arm\": \"before\", \"round\": $round, \"r\": $(PYTHONPATH=/work/wt-before python "$PROBE" 2 longest 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
done
