#!/usr/bin/env bash
# Plain vs --xla fine-tuned SavedModel (docs/results/serving.md, "XLA inside the served
# classifier"), from a clone with `pip install -e ".[test]"`, 2 CPU cores. build.py writes a
# MiniLM-shaped (6 x 384, 12 heads, 1536) random-weight classifier over a 3,000-word made-up
# vocabulary and 400 texts of 8-40 words, exported plain (`plain`) and with XLA (`xla_padded`:
# what `export --xla` writes), into /tmp/x/exp. Then 3 interleaved rounds, order reversed in
# odd rounds, each form in a fresh process.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/x && python "$HERE/build.py"
lscpu > "$HERE/lscpu.txt"
for r in 0 1 2; do
  order="plain xla_padded"; [ $((r % 2)) = 1 ] && order="xla_padded plain"
  for n in $order; do
    TF_CPP_MIN_LOG_LEVEL=3 /usr/bin/time -f "{\"impl\": \"$n\", \"round\": $r, \"process\": \"%e s wall %U+%S cpu\"}" \
      python "$HERE/time_one.py" $n $r >> "$HERE/rounds.jsonl" 2>> "$HERE/time.log"
  done
done
