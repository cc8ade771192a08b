#!/bin/bash
. /work/main/.venv/bin/activate
export PROBE_DATA=/tmp/democlone/data
cd /tmp
echo "{\"arm\": \"tensorflow\", \"round\": 1, \"r\": $(KERAS_BACKEND=tensorflow PYTHONPATH=/work/main python /tmp/speed_probe.py 2 longest 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
echo "{\"arm\": \"jax pad_to=max\", \"round\": 1, \"r\": $(KERAS_BACKEND=jax PYTHONPATH=/work/main python /tmp/speed_probe.py 2 max 2>/dev/null | tail -1)}" >> /tmp/probe_ab.jsonl
