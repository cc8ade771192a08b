#!/bin/bash
# The README's first block as written, in a fresh clone of main with a new venv and no data/.
cd /tmp/democlone4
start=$(date -u +%FT%TZ)
/usr/bin/time -v bash -c 'python3 -m venv .venv && . .venv/bin/activate && pip install -e . && electra-tf demo' > /tmp/demo4/demo.log 2> /tmp/demo4/time.txt
echo "$start $(date -u +%FT%TZ) rc=$?" > /tmp/demo4/when.txt
