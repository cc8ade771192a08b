#!/bin/bash
# The README's first block as written, in a fresh clone of main with a new venv and no data/; $1 = name
rm -rf /tmp/democlone_$1 /tmp/demopair/$1; mkdir -p /tmp/demopair/$1
git clone -q /work/main /tmp/democlone_$1 && cd /tmp/democlone_$1 || exit 1
echo "$(git rev-parse --short HEAD)" > /tmp/demopair/$1/commit.txt
start=$(date -u +%FT%TZ)
/usr/bin/time -v bash -c 'python3 -m venv .venv && . .venv/bin/activate && pip install -e . && electra-tf demo' > /tmp/demopair/$1/demo.log 2> /tmp/demopair/$1/time.txt
echo "$start $(date -u +%FT%TZ) rc=$?" > /tmp/demopair/$1/when.txt
cp runs/demo/demo_report.json runs/demo/demo_report.md /tmp/demopair/$1/ 2>/dev/null
