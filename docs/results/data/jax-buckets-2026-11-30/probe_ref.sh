#!/bin/bash
# Run as recorded with a copy of the probe in /tmp; the probe now reads its data folder from PROBE_DATA.
PROBE=$(cd "$(dirname "$0")" && pwd)/../task-backends-2026-11-30/speed_probe.py
. /work/main/.venv/bin/activate
export PROBE_DATA=/tmp/democlone/data
cd /tmp
echo "{\"arm\": \"tensorflow\", \"round\": 1, \"r\": $(KERAS_BACKEND=tensorflow PYTHONPATH=/work/main python "$PROBE" 2 longest 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
echo "{\"arm\": \"jax pad_to=max\", \"round\": 1, \"r\": $(KERAS_BACKEND=jax PYTHONPATH=/work/main python "$PROBE" 2 max 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
