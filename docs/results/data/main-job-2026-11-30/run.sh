#!/bin/bash
cd /tmp/democlone
start=$(date -u +%FT%TZ)
/usr/bin/time -v bash -c 'python3 -m venv .venv && . .venv/bin/activate && pip install -e . && electra-tf demo' > /tmp/demo.log 2> /tmp/demo.time
echo "$start $(date -u +%FT%TZ) rc=$?" > /tmp/demo.when
